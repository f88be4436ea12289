#include "experiments/lm_training.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "experiments/cli.hpp"
#include "optim/checkpoint.hpp"
#include "optim/distributed.hpp"
#include "optim/schedule.hpp"
#include "text/vectors.hpp"

namespace tg::lm {

using nlohmann::json;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

// Training windows: chunk k of an epoch starts at begin + offset + k*T and spans warmup + T
// inputs and T targets. Each epoch draws a new offset and a new chunk order from `gen`.
class Batcher {
 public:
  Batcher(const text::LMData& data, size_t warmup, size_t predictions, size_t batch)
      : data_(data), warmup_(warmup), t_(predictions), batch_(batch) {
    const size_t need = warmup + predictions + 1;
    if (data.train.size() < need + predictions)
      throw std::invalid_argument("the training split has " + std::to_string(data.train.size()) +
                                  " tokens, too few for windows of " + std::to_string(need) +
                                  " tokens (context " + std::to_string(predictions) + "); use a shorter --context");
    chunks_ = (data.train.size() - predictions - need) / predictions + 1;  // for any offset < T
  }
  size_t steps_per_epoch() const { return (chunks_ + batch_ - 1) / batch_; }
  size_t chunks() const { return chunks_; }

  void start_epoch(Generator& gen) {
    offset_ = static_cast<size_t>(gen.below(t_));
    order_.resize(chunks_);
    for (size_t i = 0; i < chunks_; ++i) order_[i] = i;
    for (size_t i = chunks_; i > 1; --i) std::swap(order_[i - 1], order_[gen.below(i)]);
  }

  std::pair<Ids, Ids> batch(size_t index) const {
    const size_t first = index * batch_, rows = std::min(batch_, chunks_ - first), len = warmup_ + t_;
    std::vector<int32_t> inputs(rows * len), targets(rows * t_);
    for (size_t r = 0; r < rows; ++r) {
      const size_t start = data_.train.begin + offset_ + order_[first + r] * t_;
      std::copy_n(data_.stream.begin() + static_cast<long>(start), len, inputs.begin() + static_cast<long>(r * len));
      std::copy_n(data_.stream.begin() + static_cast<long>(start + warmup_ + 1), t_,
                  targets.begin() + static_cast<long>(r * t_));
    }
    return {Ids({rows, len}, std::move(inputs)), Ids({rows, t_}, std::move(targets))};
  }

 private:
  const text::LMData& data_;
  size_t warmup_, t_, batch_, chunks_ = 0, offset_ = 0;
  std::vector<size_t> order_;
};

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& c, const nn::LanguageModel& model) {
  if (c.optimizer == "adamw") return std::make_unique<optim::Adam>(optim::decay_groups(model, c.weight_decay), optim::AdamOptions{.lr = c.lr}, true);
  if (c.optimizer == "adam") return std::make_unique<optim::Adam>(optim::single_group(model, c.weight_decay), optim::AdamOptions{.lr = c.lr}, false);
  if (c.optimizer == "sgd") return std::make_unique<optim::SGD>(optim::single_group(model, c.weight_decay), optim::SGDOptions{c.lr, c.momentum});
  if (c.optimizer == "lazy-adam") return std::make_unique<optim::LazyAdam>(optim::decay_groups(model, c.weight_decay), optim::AdamOptions{.lr = c.lr});
  throw std::invalid_argument("--optimizer must be adamw, adam, sgd or lazy-adam, got '" + c.optimizer + "'");
}

// Rows [begin, end) of a [rows, len] batch of ids.
Ids row_slice(const Ids& ids, size_t begin, size_t end) {
  const size_t len = ids.shape[1];
  return Ids({end - begin, len}, std::vector<int32_t>(ids.values.begin() + static_cast<long>(begin * len),
                                                      ids.values.begin() + static_cast<long>(end * len)));
}

size_t valid_limit_end(const text::LMData& data, size_t limit) {
  return limit > 0 ? std::min(data.valid.end, data.valid.begin + limit) : data.valid.end;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

json TrainConfig::to_json() const {
  return {{"model", model}, {"d_model", d_model}, {"layers", layers}, {"heads", heads}, {"context", context},
          {"ngram", ngram}, {"hidden", hidden}, {"direct", direct}, {"embedding", embedding}, {"vectors", vectors},
          {"tied", tied}, {"dropout", dropout}, {"optimizer", optimizer}, {"lr", lr}, {"weight_decay", weight_decay},
          {"momentum", momentum}, {"clip", clip}, {"schedule", schedule}, {"warmup", warmup},
          {"min_lr_ratio", min_lr_ratio}, {"lr_decay", lr_decay}, {"epochs", epochs}, {"steps", steps},
          {"batch", batch}, {"patience", patience}, {"eval_every", eval_every}, {"valid_limit", valid_limit},
          {"seed", seed}, {"threads", threads}, {"comm_overlap", comm_overlap}, {"bucket_mb", bucket_mb},
          {"corpus", data.corpus_file.empty() ? data.corpus : data.corpus_file}, {"split", data.split},
          {"min_count", data.min_count}, {"vocab_counts", data.vocab_counts}, {"train_fraction", data.train_fraction}};
}

void TrainConfig::validate() const {
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (model != "gpt" && model != "nplm") bad("--model must be gpt or nplm, got '" + model + "'");
  const auto mode = nn::parse_embedding_mode(embedding);
  if (nn::is_pretrained(mode) && vectors.empty()) bad("--embedding " + embedding + " needs --vectors FILE");
  if (!nn::is_pretrained(mode) && !vectors.empty()) bad("--vectors is only used with the pretrained embedding modes");
  if (batch == 0 || context == 0) bad("--batch and --context must be positive");
  if (epochs == 0 && steps <= 0) bad("give --epochs or --steps");
  if (!(dropout >= 0.0f && dropout < 1.0f)) bad("--dropout must be in [0, 1)");
  if (!(lr > 0.0f)) bad("--lr must be positive");
  if (threads == 0) bad("--threads must be positive");
  if (!(bucket_mb > 0.0f)) bad("--bucket-mb must be positive");
  if (batch < static_cast<size_t>(dist::size()))
    bad("--batch " + std::to_string(batch) + " is smaller than the number of MPI ranks (" + std::to_string(dist::size()) +
        "): every rank needs at least one row of each batch");
  if (schedule != "cosine" && schedule != "constant" && schedule != "inverse")
    bad("--schedule must be cosine, constant or inverse, got '" + schedule + "'");
}

text::LMData load_data(const text::LMDataOptions& options) {
  std::optional<text::LMData> data;
  dist::rank0_first([&] { data.emplace(text::load_lm_data(options)); });
  return std::move(*data);
}

std::unique_ptr<dist::GradientSync> make_gradient_sync(const TrainConfig& c, const nn::LanguageModel& model) {
  if (dist::size() == 1) return nullptr;
  return std::make_unique<dist::GradientSync>(
      model.trainable_parameters(),
      dist::SyncOptions{.bucket_bytes = static_cast<size_t>(c.bucket_mb * 1048576.0f), .overlap = c.comm_overlap});
}

std::unique_ptr<nn::LanguageModel> build_model(const TrainConfig& c, const text::LMData& data, json* log) {
  const auto mode = nn::parse_embedding_mode(c.embedding);
  Tensor pretrained;
  if (nn::is_pretrained(mode)) {
    const text::WordVectors vectors = text::load_vectors(c.vectors);
    Generator gen(c.seed ^ 0x5EEDull);
    text::AlignStats stats;
    pretrained = text::align_to_vocab(vectors, data.vocab, c.d_model, gen, &stats);
    if (log)
      (*log)["pretrained"] = {{"file", c.vectors}, {"found", stats.found}, {"missing", stats.missing},
                              {"missing_init_std", stats.init_std}};
    if (!c.quiet && c.label.empty())
      std::fprintf(stderr, "pretrained vectors %s: %zu of %zu vocabulary words found, %zu missing (initialised N(0, %.4f^2))\n",
                   c.vectors.c_str(), stats.found, data.vocab.size(), stats.missing, stats.init_std);
  }
  if (c.model == "gpt") {
    nn::GPTConfig g;
    g.vocab = data.vocab.size(), g.context = c.context, g.d_model = c.d_model, g.layers = c.layers, g.heads = c.heads;
    g.dropout = c.dropout, g.tied = c.tied, g.embedding = mode, g.seed = c.seed;
    return std::make_unique<nn::GPT>(g, pretrained);
  }
  nn::NPLMConfig n;
  n.vocab = data.vocab.size(), n.ngram = c.ngram, n.d_model = c.d_model, n.hidden = c.hidden, n.direct = c.direct;
  n.tied = c.tied, n.dropout = c.dropout, n.embedding = mode, n.seed = c.seed;
  n.max_predictions = std::max<size_t>(c.context, 256);
  return std::make_unique<nn::NPLM>(n, pretrained);
}

double evaluate_nll(nn::LanguageModel& model, const text::LMData& data, const text::Range& range, size_t batch_rows) {
  NoGrad no_grad;
  const bool was_training = model.training();
  model.eval();
  const size_t w = model.warmup(), t = std::min<size_t>(model.max_predictions(), 256);
  // About 2,048 predictions per forward pass: the logits of one batch are rows x t x V floats.
  batch_rows = std::max<size_t>(1, std::min(batch_rows, 2048 / t));
  const size_t first = std::max(range.begin, w + 1);
  // The batches, as (first target positions, length); under MPI each rank evaluates every
  // size()-th batch and the sums are added up.
  std::vector<std::pair<std::vector<size_t>, size_t>> batches(1);
  size_t p = first;
  for (; p + t <= range.end; p += t) {
    if (batches.back().first.size() == batch_rows) batches.emplace_back();
    batches.back().first.push_back(p), batches.back().second = t;
  }
  if (p < range.end) batches.push_back({{p}, range.end - p});
  double sums[2] = {0.0, 0.0};  // total loss, predictions
  for (size_t b = static_cast<size_t>(dist::rank()); b < batches.size(); b += static_cast<size_t>(dist::size())) {
    const auto& [starts, len] = batches[b];
    if (starts.empty()) continue;
    std::vector<int32_t> inputs, targets;
    for (size_t s : starts) {
      inputs.insert(inputs.end(), data.stream.begin() + static_cast<long>(s - 1 - w), data.stream.begin() + static_cast<long>(s - 1 + len));
      targets.insert(targets.end(), data.stream.begin() + static_cast<long>(s), data.stream.begin() + static_cast<long>(s + len));
    }
    const size_t rows = starts.size();
    const Tensor loss = model.loss(Ids({rows, w + len}, std::move(inputs)), Ids({rows, len}, std::move(targets)));
    sums[0] += static_cast<double>(loss.item()) * static_cast<double>(rows * len);
    sums[1] += static_cast<double>(rows * len);
  }
  dist::sum(sums, 2);
  model.train(was_training);
  if (sums[1] == 0) throw std::invalid_argument("evaluation range has no predictable tokens");
  return sums[0] / sums[1];
}

double forward_backward(nn::LanguageModel& model, const Ids& inputs, const Ids& targets, dist::GradientSync* sync) {
  if (!sync) {
    const Tensor loss = model.loss(inputs, targets);
    backward(loss);
    return loss.item();
  }
  // This rank's rows; its gradient counts in proportion to its share of the batch.
  const size_t rows = inputs.shape[0];
  const auto [begin, end] = dist::shard(rows);
  const double share = static_cast<double>(end - begin) / static_cast<double>(rows);
  double l = 0.0;
  if (end > begin) {
    const Tensor loss = model.loss(row_slice(inputs, begin, end), row_slice(targets, begin, end));
    sync->backward(loss, share);
    l = loss.item() * share;
  } else {
    sync->contribute_nothing();
  }
  return dist::sum(l);  // the same on every rank
}

RunResult train_language_model(const TrainConfig& c, const text::LMData& data, const TrainHooks& hooks) {
  c.validate();
  set_num_threads(static_cast<int>(c.threads));
  set_detect_anomaly(c.detect_anomaly);
  const double wall_start = now_s();
  const int ranks = dist::size();
  const bool writer = dist::is_main();  // only rank 0 writes results and checkpoints
  json out = {{"program", "train_lm"}, {"config", c.to_json()}, {"seed", c.seed}, {"threads", c.threads},
              {"blas", std::string("OpenBLAS ") + blas_kernel() + ", " + threading_backend() + " threads"}, {"mpi_ranks", ranks}};
  out["data"] = {{"description", data.description}, {"vocab", data.vocab.size()}, {"train_tokens", data.train.size()},
                 {"valid_tokens", data.valid.size()}, {"test_tokens", data.test.size()}};
  auto model = build_model(c, data, &out);
  auto opt = make_optimizer(c, *model);
  const bool chatty = !c.quiet && c.label.empty() && writer;
  const std::string prefix = c.label.empty() ? "" : "[" + c.label + "] ";
  const size_t t = c.model == "gpt" ? c.context : std::min(c.context, model->max_predictions());
  Batcher batcher(data, model->warmup(), t, c.batch);
  const long per_epoch = static_cast<long>(batcher.steps_per_epoch());
  const long total = c.steps > 0 ? c.steps : per_epoch * static_cast<long>(c.epochs);
  optim::Schedule schedule{c.schedule, c.lr, c.warmup, total, c.lr * c.min_lr_ratio, c.lr_decay};
  out["trainable_params"] = model->num_trainable_parameters();
  out["total_params"] = model->num_parameters();
  out["steps_per_epoch"] = per_epoch;
  out["tokens_per_step"] = c.batch * t;

  // Training state (everything a resumed run needs to continue exactly).
  Generator data_gen(c.seed ^ 0xDA7Aull);
  long step = 0;
  size_t epoch = 0, batch_in_epoch = 0, since_best = 0;
  Generator::State epoch_gen_state = data_gen.state();
  double best_valid = INFINITY, train_seconds = 0.0;
  double epoch_loss = 0.0;  // running sum over the current epoch's batches
  size_t epoch_batches = 0;
  json curve = json::array();
  std::vector<Tensor> best;  // parameters at the best validation loss
  const auto params = model->named_parameters();
  auto snapshot = [&] {
    best.clear();
    for (const auto& [n, p] : params) best.push_back(p.clone());
  };

  auto save = [&](const std::string& path) {
    if (!writer) return;
    // Between epochs the next epoch starts from the data generator's current state; inside one,
    // from the state its shuffle was drawn with (the resumed run draws it again).
    const Generator::State next_epoch = batch_in_epoch == 0 ? data_gen.state() : epoch_gen_state;
    json state = {{"step", step}, {"epoch", epoch}, {"batch_in_epoch", batch_in_epoch},
                  {"epoch_gen_state", generator_state(next_epoch)},
                  {"dropout_gen_state", generator_state(model->dropout_generator().state())},
                  {"best_valid", best_valid}, {"since_best", since_best}, {"curve", curve},
                  {"epoch_loss", epoch_loss}, {"epoch_batches", epoch_batches},
                  {"train_seconds", train_seconds}};
    std::map<std::string, Tensor> extra;
    for (size_t i = 0; i < best.size(); ++i) extra["best." + params[i].first] = best[i];
    optim::save_checkpoint(path, *model, opt.get(), {{"config", c.to_json().dump()}, {"train_state", state.dump()}}, extra);
  };
  if (!c.resume.empty()) {
    std::map<std::string, Tensor> extra;
    const auto meta = optim::load_checkpoint(c.resume, *model, opt.get(), &extra);
    if (!meta.count("train_state")) throw std::runtime_error(c.resume + ": no training state in this checkpoint");
    const json state = json::parse(meta.at("train_state"));
    step = state.at("step"), epoch = state.at("epoch"), batch_in_epoch = state.at("batch_in_epoch");
    epoch_gen_state = generator_state(state.at("epoch_gen_state"));
    data_gen.set_state(epoch_gen_state);
    model->dropout_generator().set_state(generator_state(state.at("dropout_gen_state")));
    best_valid = state.at("best_valid").is_null() ? INFINITY : state.at("best_valid").get<double>();
    since_best = state.at("since_best"), curve = state.at("curve"), train_seconds = state.at("train_seconds");
    epoch_loss = state.at("epoch_loss"), epoch_batches = state.at("epoch_batches");
    for (const auto& [n, p] : params)
      if (extra.count("best." + n)) best.push_back(extra.at("best." + n).clone());
    if (!best.empty() && best.size() != params.size()) throw std::runtime_error(c.resume + ": incomplete best-parameter snapshot");
    if (chatty) std::fprintf(stderr, "resumed from %s at step %ld (epoch %zu, batch %zu)\n", c.resume.c_str(), step, epoch + 1, batch_in_epoch);
  }

  std::unique_ptr<dist::GradientSync> sync;
  if (ranks > 1) {
    // Every rank built the same model from the same seed; rank 0's copy is authoritative anyway.
    for (const auto& [n, p] : params) dist::broadcast(Tensor(p).data(), p.numel());
    // Each rank drops out different units of its own rows: its own stream, derived from the
    // (saved or initial) state of rank 0's.
    if (dist::rank() > 0) {
      Generator::State s = model->dropout_generator().state();
      Generator derived(s.s[0] ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(dist::rank())));
      model->dropout_generator().set_state(derived.state());
    }
    sync = make_gradient_sync(c, *model);
  }

  if (chatty)
    std::fprintf(stderr, "%s\nmodel %s: %zu parameters, %zu trainable; %ld steps of %zu windows x %zu tokens (%ld per epoch)\n",
                 data.description.c_str(), c.model.c_str(), model->num_parameters(), model->num_trainable_parameters(),
                 total, c.batch, t, per_epoch);
  cli::LiveLine line;
  std::vector<double> step_times;
  const long skip = std::min<long>(5, total / 10);
  double ema = NAN;
  bool stopped_early = false;
  const text::Range epoch_valid{data.valid.begin, valid_limit_end(data, c.valid_limit)};
  while (step < total && !stopped_early) {
    if (batch_in_epoch == 0) epoch_gen_state = data_gen.state();
    data_gen.set_state(epoch_gen_state);
    batcher.start_epoch(data_gen);
    if (batch_in_epoch == 0) epoch_loss = 0.0, epoch_batches = 0;
    for (size_t b = batch_in_epoch; b < static_cast<size_t>(per_epoch) && step < total; ++b) {
      const double t0 = now_s();
      const auto [inputs, targets] = batcher.batch(b);
      opt->set_lr(schedule(step));
      opt->zero_grad();
      const double l = forward_backward(*model, inputs, targets, sync.get());
      if (c.clip > 0) optim::clip_grad_norm(model->trainable_parameters(), c.clip);
      if (hooks.after_backward) hooks.after_backward(step, *model);
      opt->step();
      const double dt = now_s() - t0;
      train_seconds += dt;
      if (step >= skip) step_times.push_back(dt);
      ++step;
      batch_in_epoch = b + 1;
      if (!std::isfinite(l))
        throw std::runtime_error("training diverged: loss is " + std::to_string(l) + " at step " + std::to_string(step) +
                                 " (lower --lr, or --detect-anomaly to find the op)");
      epoch_loss += l;
      ++epoch_batches;
      ema = std::isnan(ema) ? l : 0.95 * ema + 0.05 * l;
      if (!c.quiet) {
        const double tps = static_cast<double>(inputs.shape[0] * t) / dt;
        const double eta = train_seconds / static_cast<double>(step) * static_cast<double>(total - step);
        char buf[200];
        std::snprintf(buf, sizeof buf, "epoch %zu step %ld/%ld  loss %.4f  lr %.2e  %.0f tok/s  elapsed %s  ETA %s", epoch + 1,
                      step, total, ema, opt->lr(), tps, cli::format_duration(now_s() - wall_start).c_str(),
                      cli::format_duration(eta).c_str());
        line.update(prefix + buf);
      }
      if (c.eval_every > 0 && step % c.eval_every == 0 && step < total) {
        const double v = evaluate_nll(*model, data, epoch_valid, c.eval_batch);
        if (chatty) line.finish("step " + std::to_string(step) + ": valid ppl " + std::to_string(std::exp(v)));
      }
      // Mid-epoch checkpoints here; at an epoch's end, after its evaluation (below).
      if (!c.checkpoint.empty() && c.checkpoint_every > 0 && step % c.checkpoint_every == 0 &&
          batch_in_epoch < static_cast<size_t>(per_epoch))
        save(c.checkpoint);
    }
    const bool epoch_done = batch_in_epoch == static_cast<size_t>(per_epoch);
    const double valid = evaluate_nll(*model, data, epoch_valid, c.eval_batch);
    curve.push_back({{"epoch", epoch + 1}, {"step", step}, {"complete", epoch_done},
                     {"train_loss", epoch_batches ? epoch_loss / static_cast<double>(epoch_batches) : NAN},
                     {"valid_loss", valid}, {"valid_ppl", std::exp(valid)}, {"lr", opt->lr()},
                     {"elapsed_s", now_s() - wall_start}});
    if (valid < best_valid) {
      best_valid = valid;
      since_best = 0;
      snapshot();
    } else {
      ++since_best;
    }
    if (chatty) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "epoch %zu done at step %ld: train loss %.4f, valid ppl %.2f%s", epoch + 1, step,
                    curve.back()["train_loss"].get<double>(), std::exp(valid), since_best == 0 ? " (best)" : "");
      line.finish(buf);
    }
    if (hooks.after_epoch) hooks.after_epoch(epoch, *model);
    if (epoch_done) {
      ++epoch;
      batch_in_epoch = 0;
    }
    if (c.patience > 0 && since_best >= c.patience) stopped_early = true;
    if (!c.checkpoint.empty() && (c.checkpoint_every > 0 || step >= total || stopped_early)) save(c.checkpoint);
  }

  // The reported numbers come from the parameters with the best validation loss.
  for (size_t i = 0; i < best.size(); ++i) {
    Tensor dst = params[i].second;
    std::copy(best[i].data(), best[i].data() + best[i].numel(), dst.data());
  }
  RunResult r;
  r.valid_ppl = std::exp(c.valid_limit > 0 ? evaluate_nll(*model, data, data.valid, c.eval_batch) : best_valid);
  r.test_ppl = std::exp(evaluate_nll(*model, data, data.test, c.eval_batch));
  // Train perplexity measured like validation (eval mode, whole windows), on the first
  // 50,000 training tokens, so that train vs valid shows over-fitting without dropout noise.
  const text::Range train_probe{data.train.begin, std::min(data.train.end, data.train.begin + 50000)};
  out["train_ppl"] = std::exp(evaluate_nll(*model, data, train_probe, c.eval_batch));
  out["valid_ppl"] = r.valid_ppl;
  out["test_ppl"] = r.test_ppl;
  out["train_tokens_per_s"] = static_cast<double>(c.batch * t) / median(step_times);
  out["train_seconds"] = train_seconds;
  out["wall_s"] = now_s() - wall_start;
  out["steps"] = step;
  out["epochs"] = curve;
  out["stopped_early"] = stopped_early;
  size_t best_epoch = 0;
  for (size_t i = 0; i < curve.size(); ++i)
    if (curve[i]["valid_loss"].get<double>() == best_valid) best_epoch = curve[i]["epoch"].get<size_t>();
  out["best_epoch"] = best_epoch;
  if (sync) {
    out["mpi_comm_s"] = sync->stats().comm_seconds;
    out["mpi_comm_fraction"] = train_seconds > 0 ? sync->stats().comm_seconds / train_seconds : 0.0;
  }
  if (!c.results.empty() && writer) atomic_write(c.results, [&](std::ostream& o) { o << out.dump(2) << "\n"; });
  r.json = std::move(out);
  r.model = std::move(model);
  return r;
}

std::string sample_text(nn::LanguageModel& model, const text::Vocabulary& vocab, const std::string& prompt, size_t count,
                        float temperature, size_t top_k, uint64_t seed) {
  if (!(temperature > 0.0f)) throw std::invalid_argument("--temperature must be positive");
  NoGrad no_grad;
  model.eval();
  std::vector<int32_t> ids;
  std::istringstream words(prompt);
  for (std::string w; words >> w;) ids.push_back(vocab.id(w));
  const size_t need = model.warmup() + 1;
  while (ids.size() < need) ids.insert(ids.begin(), vocab.id("."));  // pad short prompts with sentence ends
  Generator gen(seed);
  std::string out = prompt;
  const size_t window = model.warmup() + std::min<size_t>(model.max_predictions(), 64);
  for (size_t i = 0; i < count; ++i) {
    const size_t len = std::min(ids.size(), window);
    std::vector<int32_t> input(ids.end() - static_cast<long>(len), ids.end());
    const Tensor logits = model.logits(Ids({1, len}, input));
    const size_t v = logits.size(-1), last = logits.numel() / v - 1;
    std::vector<std::pair<float, int32_t>> scored(v);
    for (size_t j = 0; j < v; ++j) scored[j] = {logits.data()[last * v + j] / temperature, static_cast<int32_t>(j)};
    std::sort(scored.begin(), scored.end(), std::greater<>());
    if (top_k > 0 && top_k < v) scored.resize(top_k);
    double z = 0.0;
    for (auto& [s, id] : scored) z += std::exp(s - scored[0].first);
    double u = gen.uniform_double() * z;
    int32_t next = scored.back().second;
    for (auto& [s, id] : scored)
      if ((u -= std::exp(s - scored[0].first)) <= 0) {
        next = id;
        break;
      }
    ids.push_back(next);
    out += " " + vocab.word(next);
  }
  return out;
}

}  // namespace tg::lm
