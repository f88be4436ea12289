#include "train/trainer.hpp"

#include "text/bpe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>

#include "autograd/parallel.hpp"
#include "autograd/precision.hpp"
#include "autograd/simd_kernels.hpp"
#include "base/build_info.hpp"
#include "base/files.hpp"
#include "base/machine.hpp"
#include "optim/checkpoint.hpp"
#include "text/vectors.hpp"
#include "train/evaluate.hpp"
#include "train/models.hpp"
#include "train/optimizers.hpp"
#include "train/signals.hpp"

namespace tg::train {

using nlohmann::json;

namespace {

// Floats (seven significant digits) are plenty for a mixture weight or a bootstrap.
void write_token_nll(const std::string& path, const std::string& fingerprint,
                     const std::vector<double>& valid, const std::vector<double>& test) {
  const auto as_floats = [](const std::vector<double>& v) {
    return std::vector<float>(v.begin(), v.end());
  };
  const json out = {
      {"data_fingerprint", fingerprint}, {"valid", as_floats(valid)}, {"test", as_floats(test)}};
  base::atomic_write(path, [&](std::ostream& o) { o << out.dump() << "\n"; });
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double process_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

json generator_state(const Generator::State& s) {
  return {{"s", {s.s[0], s.s[1], s.s[2], s.s[3]}}, {"has_spare", s.has_spare}, {"spare", s.spare}};
}
Generator::State generator_state(const json& j) {
  Generator::State s{};
  for (int i = 0; i < 4; ++i) s.s[i] = j.at("s").at(static_cast<size_t>(i)).get<uint64_t>();
  s.has_spare = j.at("has_spare").get<bool>();
  s.spare = j.at("spare").get<float>();
  return s;
}

// Rows [begin, end) of a [rows, len] batch of ids.
Ids row_slice(const Ids& ids, size_t begin, size_t end) {
  const size_t len = ids.shape[1];
  return Ids({end - begin, len},
             std::vector<int32_t>(ids.values.begin() + static_cast<long>(begin * len),
                                  ids.values.begin() + static_cast<long>(end * len)));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// A model's parameters exist once it is built; training needs four more copies of them (their
// gradients, Adam's two moments, the best epoch's). Checked for every model, a user's too
// (whose registry entry may have no estimate), before those are allocated.
nn::LanguageModel& with_room_to_train(nn::LanguageModel& model) {
  double floats = 0;
  for (const auto& [name, p] : model.named_parameters()) floats += static_cast<double>(p.numel());
  const double need = 4.0 * 5 * floats, memory = static_cast<double>(base::physical_memory());
  if (memory > 0 && need > memory)
    throw std::invalid_argument(
        "the model has " + std::to_string(static_cast<uint64_t>(floats)) +
        " parameters: with their gradients, optimizer state and the best epoch's copy training "
        "would need at least " +
        base::bytes_text(need) + "; this machine has " + base::bytes_text(memory));
  return model;
}

// Validates everything that can be checked before training (flags, outputs, sizes), so that
// a run fails in its first second rather than its last, and sets the process-wide switches.
TrainConfig prepared(TrainConfig c, const text::LMData& data) {
  c.validate();
  c.check_files();
  // A window needs context + 1 tokens and an epoch at least two windows (Batcher); checked
  // here too, before a model with a position table this long is allocated.
  if (2 * c.model.context + 1 > data.train.size())
    throw std::invalid_argument("the training split has " + std::to_string(data.train.size()) +
                                " tokens, too few for windows of " +
                                std::to_string(c.model.context + 1) + " tokens (context " +
                                std::to_string(c.model.context) + "); use a shorter --context");
  // A model that cannot fit is refused with its size, not found out by std::bad_alloc or the
  // OOM killer after minutes of allocating.
  const MemoryEstimate need = training_memory(c, data.vocab.size());
  if (const double memory = static_cast<double>(base::physical_memory());
      memory > 0 && need.total() > memory)
    throw std::invalid_argument("training would need at least " + base::bytes_text(need.total()) +
                                " (parameters with their gradients and optimizer state " +
                                base::bytes_text(need.parameters) + ", one batch's activations " +
                                base::bytes_text(need.activations) + "); this machine has " +
                                base::bytes_text(memory) +
                                ": lower --layers, --d-model, --hidden, --batch or --context");
  c.precision = resolve_precision(c.precision);  // refuses bf16 where the CPU lacks it
  set_num_threads(static_cast<int>(c.threads));
  set_precision(c.precision);
  set_detect_anomaly(c.detect_anomaly);
  return c;
}

bool all_finite(const std::vector<std::pair<std::string, Tensor>>& params) {
  for (const auto& [n, p] : params)
    for (size_t i = 0; i < p.numel(); ++i)
      if (!std::isfinite(p.data()[i])) return false;
  return true;
}

// JSON text; file names that are not valid UTF-8 are kept readable (U+FFFD), not fatal.
std::string dump(const json& j, int indent = -1) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// The record's fields known before training: what the run is, where and how it runs.
RunRecord new_record(const TrainConfig& c) {
  RunRecord r;
  r.version = base::version();
  r.provenance = Provenance::of_this_process();
  r.config = c.to_json();
  r.seed = c.seed;
  r.threads = c.threads;
  r.blas = std::string("OpenBLAS ") + blas_kernel() + ", " + threading_backend() + " threads";
  r.simd = detail::simd_isa();
  r.mpi_ranks = static_cast<size_t>(distributed::size());
  return r;
}

}  // namespace

json TrainState::to_json(const Generator::State& next_epoch, const Generator::State& dropout,
                         double wall_now, double cpu_now) const {
  return {{"step", step},
          {"epoch", epoch},
          {"batch_in_epoch", batch_in_epoch},
          {"epoch_gen_state", generator_state(next_epoch)},
          {"dropout_gen_state", generator_state(dropout)},
          {"best_valid", best_valid},
          {"since_best", since_best},
          {"curve", curve},
          {"evals", evals},
          {"epoch_loss", epoch_loss},
          {"epoch_batches", epoch_batches},
          {"train_seconds", train_seconds},
          {"wall_seconds", wall_now},
          {"cpu_seconds", cpu_now}};
}

namespace {

// A counter of the training state: a whole number of at most 2^53 (1e30 or -3 in a damaged
// file must not become a step count).
size_t whole_number(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
    throw std::runtime_error(std::string("training state '") + key + "' is " + v.dump() +
                             ", not a whole number");
  const auto n = v.get<unsigned long long>();
  if (n > (1ull << 53))
    throw std::runtime_error(std::string("training state '") + key + "' is " + v.dump() +
                             ", out of range");
  return static_cast<size_t>(n);
}

}  // namespace

Generator::State TrainState::from_json(const json& j) {
  step = static_cast<long>(whole_number(j, "step"));
  epoch = whole_number(j, "epoch");
  batch_in_epoch = whole_number(j, "batch_in_epoch");
  epoch_gen_state = generator_state(j.at("epoch_gen_state"));
  best_valid = j.at("best_valid").is_null() ? INFINITY : j.at("best_valid").get<double>();
  since_best = whole_number(j, "since_best");
  curve = j.at("curve");
  train_seconds = j.at("train_seconds");
  epoch_loss = j.at("epoch_loss");
  epoch_batches = whole_number(j, "epoch_batches");
  // Absent in checkpoints of older versions (their wall time then starts at this sitting).
  evals = j.value("evals", json::array());
  wall_seconds = j.value("wall_seconds", 0.0);
  cpu_seconds = j.value("cpu_seconds", 0.0);
  return generator_state(j.at("dropout_gen_state"));
}

text::LMData load_data(const text::LMDataOptions& options) {
  std::optional<text::LMData> data;
  distributed::rank0_first([&] { data.emplace(text::load_lm_data(options)); });
  return std::move(*data);
}

void add_per_word_results(RunRecord& record, const text::LMData& data) {
  const text::BytePairEncoding* bpe = data.vocab.bpe();
  if (!bpe || !record.valid_ppl || !record.test_ppl) return;
  const auto per_word = [](double ppl, size_t tokens, size_t words) {
    return std::exp(std::log(ppl) * static_cast<double>(tokens) / static_cast<double>(words));
  };
  record.tokenizer = {{"name", data.tokenizer}, {"tokens", bpe->size()}, {"hash", bpe->hash()}};
  record.valid_ppl_per_word = per_word(*record.valid_ppl, data.valid.size(), data.valid_words);
  record.test_ppl_per_word = per_word(*record.test_ppl, data.test.size(), data.test_words);
}

void write_record(const std::string& path, const RunRecord& record) {
  base::atomic_write(path, [&](std::ostream& o) { o << dump(record.to_json(), 2) << "\n"; });
}

std::unique_ptr<nn::LanguageModel> build_model(const TrainConfig& c, const text::LMData& data,
                                               json* log) {
  const ModelConfig& m = c.model;
  Tensor pretrained;
  if (nn::table_kind(m.embedding).pretrained) {
    const text::WordVectors vectors = text::load_vectors(m.vectors);
    Generator gen(c.seed ^ 0x5EEDull);
    text::AlignStats stats;
    pretrained = text::align_to_vocab(vectors, data.vocab, nn::vector_width(m.embedding, m.d_model),
                                      gen, &stats);
    if (log)
      (*log)["pretrained"] = {{"file", m.vectors},
                              {"found", stats.found},
                              {"missing", stats.missing},
                              {"missing_init_std", stats.init_std}};
    if (!c.quiet && c.label.empty())
      std::fprintf(stderr,
                   "pretrained vectors %s: %zu of %zu vocabulary words found, %zu missing "
                   "(initialised N(0, %.4f^2))\n",
                   m.vectors.c_str(), stats.found, data.vocab.size(), stats.missing,
                   stats.init_std);
  }
  return make_model({m, data.vocab.size(), c.seed, pretrained});
}

std::unique_ptr<distributed::GradientSync> make_gradient_sync(const TrainConfig& c,
                                                              const nn::LanguageModel& model) {
  if (distributed::size() == 1) return nullptr;
  return std::make_unique<distributed::GradientSync>(
      model.trainable_parameters(),
      distributed::SyncOptions{.bucket_bytes = static_cast<size_t>(c.bucket_mb * 1048576.0f),
                               .overlap = c.comm_overlap});
}

// The state a model carries across steps, for the whole batch: under MPI each rank carries
// the rows of its shard, so every rank adds its rows into zeros and all get the whole.
std::vector<Tensor> whole_batch_state(const nn::LanguageModel& model, size_t batch) {
  std::vector<Tensor> state = model.carried_state();
  if (distributed::size() == 1) return state;
  const auto [begin, end] = distributed::shard(batch);
  for (Tensor& t : state) {
    const size_t width = t.size(1);
    std::vector<double> rows(batch * width, 0.0);
    std::copy_n(t.data(), (end - begin) * width, rows.begin() + static_cast<long>(begin * width));
    distributed::sum(rows.data(), rows.size());
    t = Tensor::from_vector({batch, width}, std::vector<float>(rows.begin(), rows.end()));
  }
  return state;
}

// This rank's rows of a whole-batch state.
std::vector<Tensor> shard_of_state(const std::vector<Tensor>& state, size_t batch) {
  const auto [begin, end] = distributed::shard(batch);
  std::vector<Tensor> mine;
  for (const Tensor& t : state) mine.push_back(narrow(t, 0, begin, end - begin));
  return mine;
}

double forward_backward(nn::LanguageModel& model, const Ids& inputs, const Ids& targets,
                        distributed::GradientSync* sync) {
  if (!sync) {
    const Tensor loss = model.loss(inputs, targets);
    backward(loss);
    return loss.item();
  }
  // This rank's rows; its gradient counts in proportion to its share of the batch.
  const size_t rows = inputs.shape[0];
  const auto [begin, end] = distributed::shard(rows);
  const double share = static_cast<double>(end - begin) / static_cast<double>(rows);
  double l = 0.0;
  if (end > begin) {
    const Tensor loss = model.loss(row_slice(inputs, begin, end), row_slice(targets, begin, end));
    sync->backward(loss, share);
    l = loss.item() * share;
  } else {
    sync->contribute_nothing();
  }
  return distributed::sum(l);  // the same on every rank
}

Trainer::Trainer(const TrainConfig& config, const text::LMData& data, TrainHooks hooks)
    : Trainer(config, data, nullptr, std::move(hooks)) {}

Trainer::Trainer(const TrainConfig& config, const text::LMData& data,
                 std::unique_ptr<nn::LanguageModel> model, TrainHooks hooks)
    : c_(prepared(config, data)),
      data_(data),
      hooks_(std::move(hooks)),
      record_(new_record(c_)),
      model_(model ? std::move(model) : build_model(c_, data, &record_.extra)),
      opt_(make_optimizer({c_, with_room_to_train(*model_)})),
      params_(model_->named_parameters()),
      batcher_(data, model_->warmup(), std::min(c_.model.context, model_->max_predictions()),
               c_.batch, model_->carries_state() ? BatchOrder::streams : BatchOrder::shuffled),
      per_epoch_(static_cast<long>(batcher_.steps_per_epoch())),
      total_(c_.steps > 0 ? c_.steps : per_epoch_ * static_cast<long>(c_.epochs)),
      schedule_{c_.schedule, c_.lr, c_.warmup, total_, c_.lr * c_.min_lr_ratio, c_.lr_decay},
      data_gen_(c_.seed ^ 0xDA7Aull),
      epoch_valid_{data.valid.begin,
                   c_.valid_limit > 0 ? std::min(data.valid.end, data.valid.begin + c_.valid_limit)
                                      : data.valid.end},
      chatty_(!c_.quiet && c_.label.empty() && distributed::is_main()),
      prefix_(c_.label.empty() ? "" : "[" + c_.label + "] "),
      skip_(std::min<long>(5, total_ / 10)),
      wall_start_(now_s()),
      cpu_start_(process_cpu_s()) {
  fingerprint_ = text::fingerprint(data);
  record_.data = {fingerprint_,      data.description,  data.vocab.size(),
                  data.train.size(), data.valid.size(), data.test.size()};
  record_.trainable_params = model_->num_trainable_parameters();
  record_.total_params = model_->num_parameters();
  record_.steps_per_epoch = static_cast<size_t>(per_epoch_);
  record_.tokens_per_step = c_.batch * batcher_.predictions();
  state_.epoch_gen_state = data_gen_.state();
  if (model_->carries_state() && static_cast<size_t>(distributed::size()) > c_.batch)
    throw std::invalid_argument("--batch " + std::to_string(c_.batch) + " on " +
                                std::to_string(distributed::size()) +
                                " ranks: a model that carries its state needs a stream (a batch "
                                "row) on every rank; use --batch " +
                                std::to_string(distributed::size()) + " or more");
  if (distributed::size() > 1) check_ranks_agree();
  if (!c_.resume.empty()) load_checkpoint(c_.resume);
  if (distributed::size() > 1) {
    // Every rank built the same model from the same seed; rank 0's copy is authoritative anyway.
    for (const auto& [n, p] : params_) distributed::broadcast(Tensor(p).data(), p.numel());
    // Each rank drops out different units of its own rows: its own stream, derived from the
    // (saved or initial) state of rank 0's.
    if (distributed::rank() > 0) {
      Generator::State s = model_->dropout_generator().state();
      Generator derived(s.s[0] ^
                        (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(distributed::rank())));
      model_->dropout_generator().set_state(derived.state());
    }
    sync_ = make_gradient_sync(c_, *model_);
  }
}

Trainer::~Trainer() = default;

namespace {
// "\n  --results: 'r1.json' on rank 1, none on rank 0" for each file flag the ranks differ in.
std::string file_differences(const json& rank0, const json& other, const std::string& on) {
  std::string out;
  const auto shown = [](const json& path) {
    return path.get<std::string>().empty() ? std::string("none")
                                           : "'" + path.get<std::string>() + "'";
  };
  for (const auto& [flag, path] : rank0.items())
    if (other.value(flag, json("")) != path)
      out += "\n  " + flag + ": " + shown(other.value(flag, json(""))) + " " + on + ", " +
             shown(path) +
             " on rank 0 (rank 0 writes and reads these files for the job: give "
             "them to every rank alike)";
  return out;
}
}  // namespace

void Trainer::check_ranks_agree() const {
  // Ranks started with other flags or data would exchange gradients of other shapes (a crash
  // inside MPI), wait for steps the others never take (a hang), or average gradients of other
  // models (a wrong model, exit 0). Before the first collective on the model, every rank
  // compares its configuration and data with rank 0's, and all stop together if any differs.
  // The files it names too: rank 0 writes every output, so an output given to another rank
  // only would be dropped without a word.
  const json files = {{"--results", c_.results},
                      {"--checkpoint", c_.checkpoint},
                      {"--token-nll", c_.token_nll},
                      {"--export-vectors", c_.export_vectors},
                      {"--resume", c_.resume}};
  const std::string mine =
      dump(json{{"config", c_.to_json()}, {"data", fingerprint_}, {"files", files}});
  const std::string first = distributed::broadcast(mine);  // rank 0's
  if (distributed::sum(first != mine ? 1.0 : 0.0) == 0) return;
  // Every rank names the same difference: each rank against rank 0, not against itself.
  const json ours = json::parse(first);
  std::string message;
  for (int r = 1; r < distributed::size(); ++r) {
    const json theirs = json::parse(distributed::broadcast(mine, r));
    const std::string on = "on rank " + std::to_string(r);
    const std::string differences =
        config_differences(ours.at("config"), theirs.at("config"), "on rank 0", on) +
        data_difference(ours.at("data").get<std::string>(), theirs.at("data").get<std::string>(),
                        "on rank 0", on) +
        file_differences(ours.at("files"), theirs.at("files"), on);
    if (!differences.empty() && message.empty())
      message = "rank " + std::to_string(r) + " of " + std::to_string(distributed::size()) +
                " was started with other settings than rank 0:" + differences;
  }
  throw std::invalid_argument("the MPI ranks disagree before the first step, so none trains: " +
                              message + "\n(start every rank with the same flags and corpus)");
}

void Trainer::save_checkpoint(const std::string& path) const {
  const std::vector<Tensor> carried = whole_batch_state(*model_, c_.batch);  // every rank
  if (!distributed::is_main()) return;  // only rank 0 writes results and checkpoints
  // A checkpoint is only ever of finite parameters: after a divergence the last good one stays.
  if (!all_finite(params_))
    throw std::runtime_error(
        "training diverged: parameters are not finite at step " + std::to_string(state_.step) +
        "; " + path +
        " keeps the last finite state (lower --lr, or --detect-anomaly to find the op)");
  // Between epochs the next epoch starts from the data generator's current state; inside one,
  // from the state its shuffle was drawn with (the resumed run draws it again).
  const Generator::State next_epoch =
      state_.batch_in_epoch == 0 ? data_gen_.state() : state_.epoch_gen_state;
  const json state = state_.to_json(next_epoch, model_->dropout_generator().state(), wall_seconds(),
                                    cpu_seconds());
  std::map<std::string, Tensor> extra;
  for (size_t i = 0; i < state_.best.size(); ++i)
    extra["best." + params_[i].first] = state_.best[i];
  for (size_t i = 0; i < carried.size(); ++i) extra["carried." + std::to_string(i)] = carried[i];
  std::map<std::string, std::string> meta = {{"config", dump(c_.to_json())},
                                             {"train_state", dump(state)},
                                             {"data_fingerprint", fingerprint_}};
  // The BPE's own hash (its tokens and merges), so that a resume names a changed vocabulary as
  // such, not only as other data.
  if (const text::BytePairEncoding* bpe = data_.vocab.bpe()) meta["tokenizer_hash"] = bpe->hash();
  if (hooks_.save_state) meta["hooks_state"] = dump(hooks_.save_state());
  optim::save_checkpoint(path, *model_, opt_.get(), meta, extra);
}

double Trainer::wall_seconds() const {
  return state_.wall_seconds + (now_s() - wall_start_);
}

double Trainer::cpu_seconds() const {
  return state_.cpu_seconds + (process_cpu_s() - cpu_start_);
}

void Trainer::load_checkpoint(const std::string& path) {
  check_resumable(path, read_safetensors_metadata(path));  // before shapes can disagree
  std::map<std::string, Tensor> extra;
  const auto meta = optim::load_checkpoint(path, *model_, opt_.get(), &extra);
  if (!meta.count("train_state"))
    throw std::runtime_error(path + ": no training state in this checkpoint");
  try {
    model_->dropout_generator().set_state(state_.from_json(json::parse(meta.at("train_state"))));
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": damaged training state: " + e.what());
  }
  data_gen_.set_state(state_.epoch_gen_state);
  state_.best.clear();
  for (const auto& [n, p] : params_)
    if (extra.count("best." + n)) state_.best.push_back(extra.at("best." + n).clone());
  if (!state_.best.empty() && state_.best.size() != params_.size())
    throw std::runtime_error(path + ": incomplete best-parameter snapshot");
  std::vector<Tensor> carried;
  while (extra.count("carried." + std::to_string(carried.size())))
    carried.push_back(extra.at("carried." + std::to_string(carried.size())));
  for (const Tensor& t : carried)
    if (t.dim() != 2 || t.size(0) != c_.batch)
      throw std::runtime_error(path + ": a carried state of shape " + to_string(t.shape()) +
                               " for batches of " + std::to_string(c_.batch) + " rows");
  if (!carried.empty() && !model_->carries_state())
    throw std::runtime_error(path + ": carries a recurrent state, and this run's model has none");
  // Between epochs the state is reset anyway; inside one, the resumed run goes on from it.
  model_->set_carried_state(shard_of_state(carried, c_.batch));
  if (hooks_.load_state) {
    if (!meta.count("hooks_state"))
      throw std::runtime_error(path + ": no state for this run's hooks (saved without them)");
    hooks_.load_state(json::parse(meta.at("hooks_state")));
  } else if (meta.count("hooks_state")) {
    // Saved by a run whose hooks kept state (a probe, a user's schedule): resuming without them
    // would go on as a different run.
    throw std::runtime_error(path + ": holds state of training hooks that this run does not " +
                             "have (resume it with the program that saved it)");
  }
  if (state_.step > total_)
    throw std::invalid_argument(path + " is at step " + std::to_string(state_.step) +
                                " and this run ends at step " + std::to_string(total_) +
                                " (--steps/--epochs): raise --steps or --epochs");
  // A checkpoint from the end of training (written before the final evaluation, which a kill
  // may have cut short) has nothing left to train: the run goes on to that evaluation, as the
  // uninterrupted run did. A larger --patience (or --epochs) trains on.
  stopped_early_ = c_.patience > 0 && state_.since_best >= c_.patience;
  if (state_.batch_in_epoch > static_cast<size_t>(per_epoch_))
    throw std::runtime_error(path + ": batch " + std::to_string(state_.batch_in_epoch) +
                             " of an epoch of " + std::to_string(per_epoch_) + " batches");
  if (!c_.quiet && distributed::is_main())
    std::fprintf(stderr, "%sresumed from %s at step %ld (epoch %zu, batch %zu)%s\n",
                 prefix_.c_str(), path.c_str(), state_.step, state_.epoch + 1,
                 state_.batch_in_epoch,
                 state_.step == total_ || stopped_early_
                     ? ": training had ended, evaluating its best parameters"
                     : "");
}

void Trainer::check_resumable(const std::string& path,
                              const std::map<std::string, std::string>& meta) const {
  std::string mismatches;
  bool same_bpe = false;
  if (const auto recorded = meta.find("tokenizer_hash"); recorded != meta.end()) {
    const text::BytePairEncoding* bpe = data_.vocab.bpe();
    const std::string here = bpe ? bpe->hash() : "none (word-level)";
    same_bpe = recorded->second == here;
    if (!same_bpe)
      mismatches += "\n  tokenizer hash: " + recorded->second + " in the checkpoint, " + here +
                    " in this run (the BPE's tokens or merges differ)";
  }
  if (meta.count("data_fingerprint"))
    mismatches += data_difference(meta.at("data_fingerprint"), fingerprint_, "in the checkpoint",
                                  "in this run");
  if (meta.count("config")) {
    json recorded = json::parse(meta.at("config"), nullptr, false);
    try {
      (void)TrainConfig::from_json(recorded);  // an unknown key or a foreign value: refused
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(path + ": its configuration cannot be read: " + e.what());
    }
    // A BPE is its files, checked by their hash: wherever they are now (a study folder moved
    // or cloned elsewhere), the run resumes.
    if (same_bpe && recorded.is_object()) recorded["tokenizer"] = c_.data.tokenizer;
    mismatches += config_differences(recorded, c_.to_json(), "in the checkpoint", "in this run",
                                     resume_keys());
  }
  if (!mismatches.empty()) {
    std::string may_change;
    for (const char* key : resume_keys(false))
      may_change += (may_change.empty() ? "" : ", ") + std::string(key);
    throw std::invalid_argument(
        path + " was trained with other settings than this run:" + mismatches +
        "\n(these must match to resume; these may change: " + may_change + ")");
  }
}

// The step loop.
RunResult Trainer::run() {
  if (chatty_)
    std::fprintf(stderr,
                 "%s\nmodel %s: %zu parameters, %zu trainable; %ld steps of %zu windows x %zu "
                 "tokens (%ld per epoch)\n",
                 data_.description.c_str(), c_.model.name.c_str(), model_->num_parameters(),
                 model_->num_trainable_parameters(), total_, c_.batch, batcher_.predictions(),
                 per_epoch_);
  const StopSignalScope stop_on_signal;  // a SIGINT/SIGTERM ends the step loop cleanly
  while (state_.step < total_ && !stopped_early_) {
    begin_epoch();
    for (size_t b = state_.batch_in_epoch;
         b < static_cast<size_t>(per_epoch_) && state_.step < total_; ++b) {
      train_step(b);
      if (const int signal = agreed_stop_signal()) interrupt(signal);
      const long step = state_.step;
      if (c_.eval_every > 0 && step % c_.eval_every == 0 && step < total_) {
        const double v = evaluate_nll(*model_, data_, epoch_valid_, c_.eval_batch);
        check_finite_validation(v);
        state_.evals.push_back({{"step", step}, {"valid_loss", v}, {"valid_ppl", std::exp(v)}});
        if (chatty_)
          line_.finish("step " + std::to_string(step) + ": valid ppl " +
                       std::to_string(std::exp(v)));
      }
      // Mid-epoch checkpoints here; at an epoch's end, after its evaluation (end_epoch).
      if (!c_.checkpoint.empty() && c_.checkpoint_every > 0 && step % c_.checkpoint_every == 0 &&
          state_.batch_in_epoch < static_cast<size_t>(per_epoch_))
        save_checkpoint(c_.checkpoint);
    }
    end_epoch();
  }
  RunResult result = [&] {
    const FinalStretch final_evaluation(
        "\nstop signal: the final evaluation finishes first (" +
        (c_.checkpoint.empty() ? std::string("no --checkpoint: stopping now loses the run")
                               : "--resume " + c_.checkpoint + " ends with this evaluation") +
        "); a second signal stops at once\n");
    return finish();
  }();
  // A signal during the final evaluation: the evaluation was finished and every file written,
  // so the run is complete; stop as asked, saying so.
  if (const int signal = agreed_stop_signal()) {
    clear_stop_signal();
    throw Interrupted(signal,
                      signal_name(signal) +
                          " during the final evaluation, which finished: the run is complete" +
                          (c_.results.empty() ? "" : "; results in " + c_.results) +
                          (c_.checkpoint.empty() ? "" : "; checkpoint " + c_.checkpoint));
  }
  return result;
}

void Trainer::interrupt(int signal) {
  std::string saved;
  if (!c_.checkpoint.empty()) {
    save_checkpoint(c_.checkpoint);
    saved = "checkpoint " + c_.checkpoint;
  }
  record_.interrupted = signal_name(signal);
  record_times();
  if (!c_.results.empty() && distributed::is_main()) {
    write_record(c_.results, record_);
    saved += std::string(saved.empty() ? "" : ", ") + "partial results " + c_.results;
  }
  // The other ranks wait for rank 0's files: a rank that exits first makes mpirun end the job,
  // rank 0's save included.
  if (distributed::size() > 1) distributed::barrier();
  clear_stop_signal();  // handled here: the StopSignalScope does not raise it again
  throw Interrupted(
      signal,
      signal_name(signal) + ": stopped after step " + std::to_string(state_.step) + " of " +
          std::to_string(total_) +
          (saved.empty() ? " (nothing saved: no --checkpoint or --results)" : "; saved " + saved) +
          (c_.checkpoint.empty() ? "" : "; continue with --resume " + c_.checkpoint));
}

void Trainer::check_finite_validation(double valid) const {
  if (!std::isfinite(valid))
    throw std::runtime_error("training diverged: the validation loss is " + std::to_string(valid) +
                             " after step " + std::to_string(state_.step) +
                             (!c_.checkpoint.empty() && std::filesystem::exists(c_.checkpoint)
                                  ? "; " + c_.checkpoint + " keeps the last finite state"
                                  : "; nothing was saved") +
                             " (lower --lr, or --detect-anomaly to find the op)");
}

void Trainer::begin_epoch() {
  if (state_.batch_in_epoch == 0) {
    state_.epoch_gen_state = data_gen_.state();
    model_->reset_state();  // the streams start again
  }
  data_gen_.set_state(state_.epoch_gen_state);
  batcher_.start_epoch(data_gen_);
  if (state_.batch_in_epoch == 0) state_.epoch_loss = 0.0, state_.epoch_batches = 0;
}

double Trainer::train_step(size_t b) {
  const double t0 = now_s();
  const auto [inputs, targets] = batcher_.batch(b);
  opt_->set_lr(schedule_(state_.step));
  opt_->zero_grad();
  const double l = forward_backward(*model_, inputs, targets, sync_.get());
  if (c_.clip > 0) optim::clip_grad_norm(model_->trainable_parameters(), c_.clip);
  if (hooks_.after_backward) hooks_.after_backward(state_.step, *model_);
  opt_->step();
  const double dt = now_s() - t0;
  if (hooks_.after_step) hooks_.after_step(state_.step, *model_);
  state_.train_seconds += dt;
  process_step_seconds_ += dt;
  ++process_steps_;
  if (state_.step >= skip_) step_times_.push_back(dt);
  ++state_.step;
  state_.batch_in_epoch = b + 1;
  if (!std::isfinite(l))
    throw std::runtime_error("training diverged: loss is " + std::to_string(l) + " at step " +
                             std::to_string(state_.step) +
                             " (lower --lr, or --detect-anomaly to find the op)");
  state_.epoch_loss += l;
  ++state_.epoch_batches;
  report_progress(l, inputs.shape[0], dt);
  return l;
}

void Trainer::report_progress(double l, size_t rows, double dt) {
  ema_ = std::isnan(ema_) ? l : 0.95 * ema_ + 0.05 * l;
  if (c_.quiet) return;
  const double tps = static_cast<double>(rows * batcher_.predictions()) / dt;
  const double eta = process_step_seconds_ / static_cast<double>(process_steps_) *
                     static_cast<double>(total_ - state_.step);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "epoch %zu step %ld/%ld  loss %.4f  lr %.2e  %.0f tok/s  elapsed %s  ETA %s",
                state_.epoch + 1, state_.step, total_, ema_, opt_->lr(), tps,
                format_duration(wall_seconds()).c_str(), format_duration(eta).c_str());
  line_.update(prefix_ + buf);
}

void Trainer::end_epoch() {
  TrainState& s = state_;
  const bool epoch_done = s.batch_in_epoch == static_cast<size_t>(per_epoch_);
  const double valid = evaluate_nll(*model_, data_, epoch_valid_, c_.eval_batch);
  check_finite_validation(valid);
  s.curve.push_back(
      {{"epoch", s.epoch + 1},
       {"step", s.step},
       {"complete", epoch_done},
       {"train_loss", s.epoch_batches ? s.epoch_loss / static_cast<double>(s.epoch_batches) : NAN},
       {"valid_loss", valid},
       {"valid_ppl", std::exp(valid)},
       {"lr", opt_->lr()},
       {"elapsed_s", wall_seconds()}});
  if (valid < s.best_valid) {
    s.best_valid = valid;
    s.since_best = 0;
    s.best.clear();
    for (const auto& [n, p] : params_) s.best.push_back(p.clone());
  } else {
    ++s.since_best;
  }
  if (chatty_) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "epoch %zu done at step %ld: train loss %.4f, valid ppl %.2f%s",
                  s.epoch + 1, s.step, s.curve.back()["train_loss"].get<double>(), std::exp(valid),
                  s.since_best == 0 ? " (best)" : "");
    line_.finish(buf);
  }
  if (hooks_.after_epoch) hooks_.after_epoch(s.epoch, *model_, s.curve.back());
  if (epoch_done) {
    ++s.epoch;
    s.batch_in_epoch = 0;
  }
  if (c_.patience > 0 && s.since_best >= c_.patience) stopped_early_ = true;
  if (!c_.checkpoint.empty() &&
      (c_.checkpoint_every > 0 || c_.checkpoint_each_epoch || s.step >= total_ || stopped_early_))
    save_checkpoint(c_.checkpoint);
}

void Trainer::record_times() {
  record_.steps = static_cast<size_t>(state_.step);
  record_.epochs = state_.curve;
  record_.evals = state_.evals;
  record_.train_seconds = state_.train_seconds;
  record_.wall_s = wall_seconds();
  record_.cpu_s = cpu_seconds();
}

RunResult Trainer::finish() {
  // The reported numbers come from the parameters with the best validation loss.
  for (size_t i = 0; i < state_.best.size(); ++i) {
    Tensor dst = params_[i].second;
    std::copy(state_.best[i].data(), state_.best[i].data() + state_.best[i].numel(), dst.data());
  }
  RunResult r;
  const double best_valid = state_.best_valid;
  r.valid_ppl = std::exp(
      c_.valid_limit > 0 ? evaluate_nll(*model_, data_, data_.valid, c_.eval_batch) : best_valid);
  r.test_ppl = std::exp(evaluate_nll(*model_, data_, data_.test, c_.eval_batch));
  if (!std::isfinite(r.valid_ppl) || !std::isfinite(r.test_ppl))
    throw std::runtime_error("training diverged: perplexity valid " + std::to_string(r.valid_ppl) +
                             ", test " + std::to_string(r.test_ppl) + " with the best parameters");
  // Train perplexity measured like validation (eval mode, whole windows), on the first
  // 50,000 training tokens, so that train vs valid shows over-fitting without dropout noise.
  const text::Range train_probe{data_.train.begin,
                                std::min(data_.train.end, data_.train.begin + 50000)};
  RunRecord& out = record_;
  // The test split's per-token losses, for a hook's analysis or the --token-nll file.
  const std::vector<double> test_nll = hooks_.after_test || !c_.token_nll.empty()
                                           ? token_nll(*model_, data_, data_.test, c_.eval_batch)
                                           : std::vector<double>{};
  if (!c_.token_nll.empty()) {
    const std::vector<double> valid_nll = token_nll(*model_, data_, data_.valid, c_.eval_batch);
    if (distributed::is_main()) write_token_nll(c_.token_nll, fingerprint_, valid_nll, test_nll);
  }
  if (!c_.export_vectors.empty() && distributed::is_main()) {
    // The table as evaluated (the best epoch's), each row named as word-vector files name it,
    // so that --vectors (here, or in gensim) reads it back.
    std::vector<std::string> names(data_.vocab.size());
    for (size_t id = 0; id < names.size(); ++id)
      names[id] = data_.vocab.spelling(static_cast<int32_t>(id));
    text::save_vectors(c_.export_vectors, names, model_->input_embedding().weight(),
                       text::VectorFormat::text);
  }
  out.train_ppl = std::exp(evaluate_nll(*model_, data_, train_probe, c_.eval_batch));
  out.valid_ppl = r.valid_ppl;
  out.test_ppl = r.test_ppl;
  add_per_word_results(out, data_);
  // The median step of this sitting; a sitting that trained no step (it resumed from the end
  // of training) has the mean step of the run.
  const double step_seconds = !step_times_.empty() ? median(step_times_)
                              : state_.step > 0
                                  ? state_.train_seconds / static_cast<double>(state_.step)
                                  : 0.0;
  out.train_tokens_per_s =
      step_seconds > 0 ? static_cast<double>(c_.batch * batcher_.predictions()) / step_seconds
                       : 0.0;
  record_times();
  out.stopped_early = stopped_early_;
  size_t best_epoch = 0;
  for (const auto& e : state_.curve)
    if (e["valid_loss"].get<double>() == best_valid) best_epoch = e["epoch"].get<size_t>();
  out.best_epoch = best_epoch;
  if (hooks_.after_test || hooks_.after_training) {
    // The hooks see the whole record and may add fields of their own; what they change in the
    // record's own fields is checked as a file's would be.
    json all = out.to_json();
    if (hooks_.after_test) hooks_.after_test(test_nll, all);
    if (hooks_.after_training) hooks_.after_training(*model_, all);
    out = RunRecord::from_json(all, "the after_test and after_training hooks' results");
  }
  if (sync_) {
    out.extra["mpi_comm_s"] = sync_->stats().comm_seconds;
    out.extra["mpi_comm_fraction"] =
        state_.train_seconds > 0 ? sync_->stats().comm_seconds / state_.train_seconds : 0.0;
  }
  if (!c_.results.empty() && distributed::is_main()) write_record(c_.results, out);
  r.json = out.to_json();
  r.record = out;
  r.model = std::move(model_);
  return r;
}

RunResult train_language_model(const TrainConfig& config, const text::LMData& data,
                               const TrainHooks& hooks) {
  return Trainer(config, data, hooks).run();
}

}  // namespace tg::train
