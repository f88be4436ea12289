#include "experiments/lifecycle_probe.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "experiments/study.hpp"

namespace tg::experiments {

using nlohmann::json;

namespace {

// Rows with any non-zero gradient, from the sparse part and the dense part.
void mark_rows(const Tensor& w, std::vector<bool>& touched) {
  const size_t width = w.size(1);
  if (const SparseGrad* s = w.sparse_grad())
    for (int32_t r : s->rows) touched[static_cast<size_t>(r)] = true;
  if (w.has_dense_grad()) {
    const float* g = w.grad().data();
    for (size_t r = 0; r < touched.size(); ++r)
      for (size_t j = 0; j < width && !touched[r]; ++j) touched[r] = g[r * width + j] != 0.0f;
  }
}

std::vector<std::string> neighbours(const text::VectorIndex& index, const std::string& word,
                                    size_t k) {
  const int row = index.find(word, false);
  if (row < 0) return {};
  std::vector<std::string> out;
  for (const auto& [r, s] : index.nearest(index.row(row), k, {row})) out.push_back(index.word(r));
  return out;
}

}  // namespace

LifecycleProbe::LifecycleProbe(Tensor initial, std::vector<size_t> train_count, int32_t unk,
                               std::vector<std::string> probes, size_t k,
                               const text::VectorIndex& word2vec, std::vector<std::string> words)
    : initial_(std::move(initial)),
      train_count_(std::move(train_count)),
      unk_(unk),
      probes_(std::move(probes)),
      k_(k),
      word2vec_(word2vec),
      words_(std::move(words)),
      vocab_(train_count_.size()),
      touched_epoch_(vocab_, false),
      touched_step_(vocab_, false) {}

train::TrainHooks LifecycleProbe::hooks() {
  train::TrainHooks h;
  h.after_backward = [this](long step, nn::LanguageModel& m) { after_backward(step, m); };
  h.after_step = [this](long, nn::LanguageModel& m) { after_step(m); };
  h.after_epoch = [this](size_t, nn::LanguageModel& m, json& record) { after_epoch(m, record); };
  h.after_training = [this](nn::LanguageModel& m, json& results) { after_training(m, results); };
  h.save_state = [this] { return save_state(); };
  h.load_state = [this](const json& state) { load_state(state); };
  return h;
}

void LifecycleProbe::after_backward(long step, nn::LanguageModel& m) {
  const Tensor& w = m.input_embedding().weight();
  if (step == 0 && !std::equal(w.data(), w.data() + w.numel(), initial_.data()))
    throw std::logic_error("exp_lifecycle: the rebuilt initial table is not the model's");
  std::fill(touched_step_.begin(), touched_step_.end(), false);
  mark_rows(w, touched_step_);
  size_t n = 0;
  for (size_t r = 0; r < vocab_; ++r) {
    n += touched_step_[r];
    touched_epoch_[r] = touched_epoch_[r] || touched_step_[r];
  }
  rows_sum_ += static_cast<double>(n) / static_cast<double>(vocab_);
  ++steps_;
  before_step_.assign(w.data(), w.data() + w.numel());
}

void LifecycleProbe::after_step(nn::LanguageModel& m) {
  const Tensor& w = m.input_embedding().weight();
  const size_t width = w.size(1);
  size_t changed = 0;
  for (size_t r = 0; r < vocab_; ++r)
    changed += std::memcmp(w.data() + r * width, before_step_.data() + r * width,
                           width * sizeof(float)) != 0;
  changed_last_ = static_cast<double>(changed) / static_cast<double>(vocab_);
  changed_sum_ += changed_last_;
  ++changed_steps_;
}

void LifecycleProbe::after_epoch(nn::LanguageModel& m, json& record) {
  size_t n = 0;
  for (bool t : touched_epoch_) n += t;
  record["rows_touched"] = static_cast<double>(n) / static_cast<double>(vocab_);
  std::fill(touched_epoch_.begin(), touched_epoch_.end(), false);
  const Tensor& w = m.input_embedding().weight();
  const size_t width = w.size(1);
  std::map<std::string, std::pair<double, size_t>> acc;
  for (size_t r = 0; r < vocab_; ++r) {
    double dot = 0, a = 0, b = 0;
    for (size_t j = 0; j < width; ++j) {
      const double x = initial_.data()[r * width + j], y = w.data()[r * width + j];
      dot += x * y;
      a += x * x;
      b += y * y;
    }
    const double cos = a > 0 && b > 0 ? dot / std::sqrt(a * b) : 1.0;
    auto& [sum, count] = acc[text::frequency_band(static_cast<int32_t>(r), train_count_[r], unk_)];
    sum += 1.0 - cos, ++count;
  }
  json bands = json::object();
  for (const auto& [band, sc] : acc) bands[band] = sc.first / static_cast<double>(sc.second);
  record["drift"] = bands;
}

double LifecycleProbe::wordsim(const Tensor& table) const {
  // A BPE (no <unk>) names its rows by spelling; the test's words are its space-word tokens.
  const text::VectorIndex index(unk_ < 0 ? text::word_names_of_subwords(words_) : words_, table);
  return text::evaluate_similarity(index, data_path("wordsim353.tsv")).spearman;
}

void LifecycleProbe::after_training(nn::LanguageModel& m, json& results) const {
  const text::VectorIndex before(words_, initial_);
  const text::VectorIndex after(words_, m.input_embedding().weight());
  const text::VectorIndex output(words_, m.output_matrix());
  json probe_rows = json::array();
  for (const auto& p : probes_)
    probe_rows.push_back({{"word", p},
                          {"before", neighbours(before, p, k_)},
                          {"after", neighbours(after, p, k_)},
                          {"output", neighbours(output, p, k_)},
                          {"word2vec", neighbours(word2vec_, p, k_)}});
  results["lifecycle"] = {
      {"rows_per_step_mean", steps_ ? rows_sum_ / static_cast<double>(steps_) : 0.0},
      {"rows_changed_per_step_mean",
       changed_steps_ ? changed_sum_ / static_cast<double>(changed_steps_) : 0.0},
      {"rows_changed_steps", changed_steps_},
      {"rows_changed_last_step", changed_last_},
      {"wordsim_input", wordsim(m.input_embedding().weight())},
      {"wordsim_output", wordsim(m.output_matrix())},
      {"neighbours", probe_rows}};
}

json LifecycleProbe::save_state() const {
  std::vector<size_t> rows;
  for (size_t r = 0; r < vocab_; ++r)
    if (touched_epoch_[r]) rows.push_back(r);
  return json{{"rows_sum", rows_sum_},
              {"steps", steps_},
              {"changed_sum", changed_sum_},
              {"changed_steps", changed_steps_},
              {"touched_epoch", rows}};
}

void LifecycleProbe::load_state(const json& state) {
  rows_sum_ = state.at("rows_sum").get<double>();
  steps_ = state.at("steps").get<long>();
  // A checkpoint from before the changed rows were counted: counted from here on.
  changed_sum_ = state.value("changed_sum", 0.0);
  changed_steps_ = state.value("changed_steps", 0L);
  std::fill(touched_epoch_.begin(), touched_epoch_.end(), false);
  for (size_t r : state.at("touched_epoch").get<std::vector<size_t>>()) touched_epoch_.at(r) = true;
}

}  // namespace tg::experiments
