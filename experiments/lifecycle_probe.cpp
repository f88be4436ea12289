#include "experiments/lifecycle_probe.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "experiments/study.hpp"
#include "experiments/test_losses.hpp"
#include "train/fields.hpp"

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
                               const text::VectorIndex& word2vec, std::vector<std::string> words,
                               std::vector<int32_t> unused_reference)
    : initial_(std::move(initial)),
      train_count_(std::move(train_count)),
      unk_(unk),
      probes_(std::move(probes)),
      k_(k),
      word2vec_(word2vec),
      words_(std::move(words)),
      unused_reference_(std::move(unused_reference)),
      vocab_(train_count_.size()),
      touched_epoch_(vocab_, false),
      touched_step_(vocab_, false),
      touched_ever_(vocab_, false) {
  for (int32_t id : unused_reference_)
    if (id < 0 || static_cast<size_t>(id) >= vocab_)
      throw std::invalid_argument("LifecycleProbe: reference id " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(vocab_));
}

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
    touched_ever_[r] = touched_ever_[r] || touched_step_[r];
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
  measure_movement(w);
}

void LifecycleProbe::measure_movement(const Tensor& w) {
  const size_t width = w.size(1);
  double batch_energy = 0, energy = 0, batch_move = 0, other_move = 0;
  size_t batch_rows = 0, other_rows = 0;
  for (size_t r = 0; r < vocab_; ++r) {
    double update = 0, norm = 0;
    for (size_t j = 0; j < width; ++j) {
      const double before = before_step_[r * width + j];
      const double d = w.data()[r * width + j] - before;
      update += d * d;
      norm += before * before;
    }
    energy += update;
    const double relative = norm > 0 ? std::sqrt(update / norm) : 0.0;
    if (touched_step_[r])
      batch_energy += update, batch_move += relative, ++batch_rows;
    else
      other_move += relative, ++other_rows;
  }
  if (energy <= 0) return;  // a step that moved nothing (a frozen table)
  batch_share_sum_ += batch_energy / energy;
  if (batch_rows > 0) batch_move_sum_ += batch_move / static_cast<double>(batch_rows);
  if (other_rows > 0)
    other_move_sum_ += other_move / static_cast<double>(other_rows), ++other_steps_;
  ++moved_steps_;
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
    auto& [sum, count] = acc[frequency_band(static_cast<int32_t>(r), train_count_[r], unk_)];
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
      // Over the steps measured ("steps": a run resumed from an older checkpoint, from there).
      {"movement",
       moved_steps_ == 0
           ? json()
           : json{{"steps", moved_steps_},
                  {"batch_share_of_squared_update_mean",
                   batch_share_sum_ / static_cast<double>(moved_steps_)},
                  {"batch_row_relative_update_mean",
                   batch_move_sum_ / static_cast<double>(moved_steps_)},
                  {"other_row_relative_update_mean",
                   other_steps_ ? other_move_sum_ / static_cast<double>(other_steps_) : 0.0}}},
      {"wordsim_input", wordsim(m.input_embedding().weight())},
      {"wordsim_output", wordsim(m.output_matrix())},
      {"neighbours", probe_rows},
      {"table", census(m).to_json()}};
}

namespace {

std::vector<double> row_norms(const Tensor& table) {
  const size_t rows = table.size(0), width = table.size(1);
  std::vector<double> out(rows);
  for (size_t r = 0; r < rows; ++r) {
    double s = 0;
    for (size_t j = 0; j < width; ++j)
      s += double(table.data()[r * width + j]) * table.data()[r * width + j];
    out[r] = std::sqrt(s);
  }
  return out;
}

// Quartiles of some values (at least one).
Quartiles quartiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) {
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  return {at(0.25), at(0.5), at(0.75)};
}

// Row norms by training count, in bins 0, 1, 2-3, 4-15, 16-63, ... (powers of 4): each bin's
// quartiles of the input and the output rows' norms.
std::vector<NormBin> norms_by_count(const std::vector<double>& input_norm,
                                    const std::vector<double>& output_norm,
                                    const std::vector<size_t>& train_count) {
  std::map<size_t, std::pair<std::vector<double>, std::vector<double>>> by_bin;
  const auto bin_low = [](size_t count) -> size_t {
    if (count < 2) return count;
    size_t low = count < 4 ? 2 : 4;
    while (low * 4 <= count) low *= 4;
    return low;
  };
  for (size_t r = 0; r < train_count.size(); ++r) {
    auto& [in, out] = by_bin[bin_low(train_count[r])];
    in.push_back(input_norm[r]);
    out.push_back(output_norm[r]);
  }
  std::vector<NormBin> norms;
  for (const auto& [low, v] : by_bin) {
    const size_t high = low < 2 ? low : low == 2 ? 3 : low * 4 - 1;
    norms.push_back({low, high, v.first.size(), quartiles(v.first), quartiles(v.second)});
  }
  return norms;
}

// The search for under-trained tokens from the output matrix alone (undertrained_indicator),
// scored against the tokens the training split never had; `unseen` counts those.
UnderTrained under_trained(const Tensor& output, const std::vector<double>& input_norm,
                           const std::vector<size_t>& train_count,
                           const std::vector<int32_t>& reference,
                           const std::vector<std::string>& words, size_t unseen) {
  const size_t vocab = train_count.size();
  const std::vector<double> score = undertrained_indicator(output, reference);
  std::vector<bool> never(vocab);
  for (size_t r = 0; r < vocab; ++r) never[r] = train_count[r] == 0;
  std::vector<double> low_input_norm(vocab);
  for (size_t r = 0; r < vocab; ++r) low_input_norm[r] = -input_norm[r];
  // Flagged: at least as high as the reference's 10th percentile.
  std::vector<double> ref_scores;
  for (int32_t id : reference) ref_scores.push_back(score[static_cast<size_t>(id)]);
  std::sort(ref_scores.begin(), ref_scores.end());
  const double threshold = ref_scores[ref_scores.size() / 10];
  size_t flagged = 0, flagged_never = 0;
  std::vector<std::pair<double, size_t>> flagged_seen;
  for (size_t r = 0; r < vocab; ++r) {
    if (score[r] < threshold) continue;
    ++flagged;
    if (never[r])
      ++flagged_never;
    else
      flagged_seen.emplace_back(score[r], r);
  }
  std::sort(flagged_seen.rbegin(), flagged_seen.rend());
  UnderTrained out;
  for (size_t i = 0; i < std::min<size_t>(10, flagged_seen.size()); ++i) {
    const size_t r = flagged_seen[i].second;
    out.flagged_seen.push_back({words[r], train_count[r], flagged_seen[i].first});
  }
  out.reference = reference.size();
  out.threshold = threshold;
  out.flagged = flagged;
  out.flagged_unseen = flagged_never;
  out.precision = flagged ? static_cast<double>(flagged_never) / static_cast<double>(flagged) : 0.0;
  out.recall = unseen ? static_cast<double>(flagged_never) / static_cast<double>(unseen) : 0.0;
  out.auc_output_cosine = roc_auc(score, never);
  out.auc_low_input_norm = roc_auc(low_input_norm, never);
  return out;
}

}  // namespace

TableCensus LifecycleProbe::census(nn::LanguageModel& m) const {
  const Tensor& input = m.input_embedding().weight();
  const Tensor output = m.output_matrix();
  const size_t width = input.size(1);
  size_t with_gradient = 0, in_training = 0, unseen = 0, unseen_unchanged = 0;
  double unseen_drift = 0;
  for (size_t r = 0; r < vocab_; ++r) {
    with_gradient += touched_ever_[r];
    if (train_count_[r] > 0) {
      ++in_training;
      continue;
    }
    ++unseen;
    const float* now = input.data() + r * width;
    const float* was = initial_.data() + r * width;
    unseen_unchanged += std::memcmp(now, was, width * sizeof(float)) == 0;
    double dot = 0, a = 0, b = 0;
    for (size_t j = 0; j < width; ++j)
      dot += double(was[j]) * now[j], a += double(was[j]) * was[j], b += double(now[j]) * now[j];
    unseen_drift += a > 0 && b > 0 ? 1.0 - dot / std::sqrt(a * b) : 0.0;
  }
  const std::vector<double> input_norm = row_norms(input);
  TableCensus out;
  out.rows = vocab_;
  if (ever_complete_) out.rows_with_gradient = with_gradient;
  out.rows_in_training = in_training;
  out.unseen_rows = unseen;
  out.unseen_rows_unchanged = unseen_unchanged;
  out.unseen_rows_drift = unseen ? unseen_drift / static_cast<double>(unseen) : 0.0;
  out.norms_by_count = norms_by_count(input_norm, row_norms(output), train_count_);
  if (!unused_reference_.empty())
    out.under_trained =
        under_trained(output, input_norm, train_count_, unused_reference_, words_, unseen);
  return out;
}

namespace {

#define TG_MEMBER(path)  \
  [](auto& r) -> auto& { \
    return r.path;       \
  }

using train::fields::Field;
using train::fields::list;
using train::fields::object;
using train::fields::plain;

const std::vector<Field<Quartiles>>& quartile_fields() {
  static const std::vector<Field<Quartiles>> table = {plain<Quartiles>("q1", TG_MEMBER(q1)),
                                                      plain<Quartiles>("median", TG_MEMBER(median)),
                                                      plain<Quartiles>("q3", TG_MEMBER(q3))};
  return table;
}

const std::vector<Field<NormBin>>& bin_fields() {
  using B = NormBin;
  static const std::vector<Field<B>> table = {
      plain<B>("min_count", TG_MEMBER(min_count)), plain<B>("max_count", TG_MEMBER(max_count)),
      plain<B>("rows", TG_MEMBER(rows)),
      object<B, Quartiles>("input_norm", TG_MEMBER(input_norm), quartile_fields),
      object<B, Quartiles>("output_norm", TG_MEMBER(output_norm), quartile_fields)};
  return table;
}

const std::vector<Field<FlaggedToken>>& token_fields() {
  using F = FlaggedToken;
  static const std::vector<Field<F>> table = {plain<F>("token", TG_MEMBER(token)),
                                              plain<F>("count", TG_MEMBER(count)),
                                              plain<F>("score", TG_MEMBER(score))};
  return table;
}

const std::vector<Field<UnderTrained>>& under_trained_fields() {
  using U = UnderTrained;
  static const std::vector<Field<U>> table = {
      plain<U>("reference", TG_MEMBER(reference)),
      plain<U>("threshold", TG_MEMBER(threshold)),
      plain<U>("flagged", TG_MEMBER(flagged)),
      plain<U>("flagged_unseen", TG_MEMBER(flagged_unseen)),
      plain<U>("precision", TG_MEMBER(precision)),
      plain<U>("recall", TG_MEMBER(recall)),
      plain<U>("auc_output_cosine", TG_MEMBER(auc_output_cosine)),
      plain<U>("auc_low_input_norm", TG_MEMBER(auc_low_input_norm)),
      list<U, FlaggedToken>("flagged_seen", TG_MEMBER(flagged_seen), token_fields)};
  return table;
}

const std::vector<Field<TableCensus>>& census_fields() {
  using C = TableCensus;
  static const std::vector<Field<C>> table = {
      plain<C>("rows", TG_MEMBER(rows)),
      {"rows_with_gradient",
       [](const C& c) { return c.rows_with_gradient ? json(*c.rows_with_gradient) : json(); },
       [](C& c, const json& v) {
         c.rows_with_gradient =
             v.is_null() ? std::nullopt : std::optional(train::fields::whole_number(v));
       }},
      plain<C>("rows_in_training", TG_MEMBER(rows_in_training)),
      plain<C>("unseen_rows", TG_MEMBER(unseen_rows)),
      plain<C>("unseen_rows_unchanged", TG_MEMBER(unseen_rows_unchanged)),
      plain<C>("unseen_rows_drift", TG_MEMBER(unseen_rows_drift)),
      list<C, NormBin>("norms_by_count", TG_MEMBER(norms_by_count), bin_fields),
      object<C, UnderTrained>("under_trained", TG_MEMBER(under_trained), under_trained_fields)};
  return table;
}

#undef TG_MEMBER

}  // namespace

std::optional<double> TableCensus::unseen_input_norm() const {
  for (const NormBin& b : norms_by_count)
    if (b.max_count == 0) return b.input_norm.median;
  return std::nullopt;
}

json TableCensus::to_json() const {
  json j = train::fields::write<TableCensus>(census_fields(), *this);
  // Written as null when unknown or not searched, as the files before this struct have them.
  for (const char* key : {"rows_with_gradient", "under_trained"})
    if (!j.contains(key)) j[key] = nullptr;
  return j;
}

TableCensus TableCensus::from_json(const json& j, const std::string& where) {
  TableCensus c;
  train::fields::read<TableCensus>(census_fields(), c, j, where);
  return c;
}

std::optional<TableCensus> TableCensus::of_run(const json& run, const std::string& where) {
  const auto table = run.find("table");
  if (table == run.end() || table->is_null()) return std::nullopt;
  return from_json(*table, where);
}

std::vector<double> undertrained_indicator(const Tensor& table,
                                           const std::vector<int32_t>& reference) {
  if (table.dim() != 2 || table.size(0) == 0)
    throw std::invalid_argument("undertrained_indicator: the table must be [V, d], got " +
                                to_string(table.shape()));
  if (reference.empty())
    throw std::invalid_argument("undertrained_indicator: no reference (known unused) ids");
  const size_t rows = table.size(0), width = table.size(1);
  for (int32_t id : reference)
    if (id < 0 || static_cast<size_t>(id) >= rows)
      throw std::invalid_argument("undertrained_indicator: reference id " + std::to_string(id) +
                                  " is outside the table's " + std::to_string(rows) + " rows");
  std::vector<double> x(rows * width), mean(width, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < width; ++j) mean[j] += table.data()[r * width + j];
  for (double& v : mean) v /= static_cast<double>(rows);
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < width; ++j) x[r * width + j] = table.data()[r * width + j] - mean[j];
  // The first principal component by power iteration on X^T X (deterministic start).
  std::vector<double> pc(width, 1.0 / std::sqrt(static_cast<double>(width))), next(width);
  for (int iteration = 0; iteration < 100; ++iteration) {
    std::fill(next.begin(), next.end(), 0.0);
    for (size_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * width;
      double p = 0;
      for (size_t j = 0; j < width; ++j) p += row[j] * pc[j];
      for (size_t j = 0; j < width; ++j) next[j] += p * row[j];
    }
    double norm = 0;
    for (double v : next) norm += v * v;
    norm = std::sqrt(norm);
    if (norm == 0) break;
    for (size_t j = 0; j < width; ++j) pc[j] = next[j] / norm;
  }
  for (size_t r = 0; r < rows; ++r) {
    double* row = x.data() + r * width;
    double p = 0;
    for (size_t j = 0; j < width; ++j) p += row[j] * pc[j];
    for (size_t j = 0; j < width; ++j) row[j] -= p * pc[j];
  }
  std::vector<double> ref(width, 0.0);
  for (int32_t id : reference)
    for (size_t j = 0; j < width; ++j) ref[j] += x[static_cast<size_t>(id) * width + j];
  double ref_norm = 0;
  for (double v : ref) ref_norm += v * v;
  ref_norm = std::sqrt(ref_norm);
  std::vector<double> score(rows, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * width;
    double dot = 0, norm = 0;
    for (size_t j = 0; j < width; ++j) dot += row[j] * ref[j], norm += row[j] * row[j];
    score[r] = norm > 0 && ref_norm > 0 ? dot / (std::sqrt(norm) * ref_norm) : 0.0;
  }
  return score;
}

double roc_auc(const std::vector<double>& score, const std::vector<bool>& positive) {
  if (score.size() != positive.size())
    throw std::invalid_argument("roc_auc: " + std::to_string(score.size()) + " scores for " +
                                std::to_string(positive.size()) + " labels");
  std::vector<size_t> order(score.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  // Mann-Whitney: the positives' rank sum, ties given their mean rank.
  double rank_sum = 0;
  size_t positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && score[order[j]] == score[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j);
    for (size_t k = i; k < j; ++k)
      if (positive[order[k]]) rank_sum += mean_rank, ++positives;
    i = j;
  }
  const size_t negatives = score.size() - positives;
  if (positives == 0 || negatives == 0) return NAN;
  const double p = static_cast<double>(positives);
  return (rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

json LifecycleProbe::save_state() const {
  std::vector<size_t> rows;
  for (size_t r = 0; r < vocab_; ++r)
    if (touched_epoch_[r]) rows.push_back(r);
  std::vector<size_t> ever;
  for (size_t r = 0; r < vocab_; ++r)
    if (touched_ever_[r]) ever.push_back(r);
  return json{{"rows_sum", rows_sum_},
              {"steps", steps_},
              {"touched_ever", ever},
              {"changed_sum", changed_sum_},
              {"changed_steps", changed_steps_},
              {"movement",
               {batch_share_sum_, batch_move_sum_, other_move_sum_, moved_steps_, other_steps_}},
              {"touched_epoch", rows}};
}

void LifecycleProbe::load_state(const json& state) {
  rows_sum_ = state.at("rows_sum").get<double>();
  steps_ = state.at("steps").get<long>();
  // A checkpoint from before the changed rows were counted: counted from here on.
  changed_sum_ = state.value("changed_sum", 0.0);
  changed_steps_ = state.value("changed_steps", 0L);
  if (const json m = state.value("movement", json()); m.is_array() && m.size() == 5) {
    batch_share_sum_ = m[0].get<double>(), batch_move_sum_ = m[1].get<double>();
    other_move_sum_ = m[2].get<double>();
    moved_steps_ = m[3].get<long>(), other_steps_ = m[4].get<long>();
  }
  std::fill(touched_epoch_.begin(), touched_epoch_.end(), false);
  for (size_t r : state.at("touched_epoch").get<std::vector<size_t>>()) touched_epoch_.at(r) = true;
  // Absent in older checkpoints: the rows touched so far in this epoch are all it knows.
  touched_ever_ = touched_epoch_;
  ever_complete_ = state.contains("touched_ever");
  if (ever_complete_)
    for (size_t r : state.at("touched_ever").get<std::vector<size_t>>()) touched_ever_.at(r) = true;
}

}  // namespace tg::experiments
