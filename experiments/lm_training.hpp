// Training and evaluating a next-word model: the loop behind build/bin/train_lm and every
// experiment binary, so they all share one definition of a step, an epoch, perplexity,
// throughput and the results file.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "nn/nn.hpp"
#include "optim/distributed.hpp"
#include "optim/optimizer.hpp"
#include "text/lm_data.hpp"

namespace tg::lm {

struct TrainConfig {
  // Model.
  std::string model = "gpt";  // gpt | nplm
  size_t d_model = 128, layers = 2, heads = 4, context = 64;  // GPT
  size_t ngram = 5, hidden = 100;                              // NPLM
  bool direct = false;
  std::string embedding = "learned";
  std::string vectors;  // word2vec file for the pretrained modes
  bool tied = false;
  float dropout = 0.1f;
  // Optimisation.
  std::string optimizer = "adamw";  // adamw | adam | sgd | lazy-adam
  float lr = 1e-3f, weight_decay = 0.1f, momentum = 0.0f, clip = 1.0f;
  std::string schedule = "cosine";  // cosine | constant | inverse
  long warmup = 100;
  float min_lr_ratio = 0.1f;  // cosine floor, as a fraction of lr
  float lr_decay = 1e-5f;     // r of the inverse schedule lr / (1 + r t)
  size_t epochs = 1;
  long steps = 0;  // > 0: train this many steps instead of whole epochs
  size_t batch = 32;
  size_t patience = 0;  // > 0: stop after this many epochs without a better validation loss
  long eval_every = 0;  // > 0: also evaluate every N steps (logged, not used for stopping)
  size_t eval_batch = 32;
  size_t valid_limit = 0;  // > 0: per-epoch validation on the first N valid tokens (final numbers use all)
  uint64_t seed = 1;
  size_t threads = 1;
  bool detect_anomaly = false;
  // Under mpirun (see optim/distributed.hpp).
  bool comm_overlap = true;  // reduce gradient buckets while backward runs
  float bucket_mb = 4.0f;
  // Files.
  std::string checkpoint;  // written at the end (and every checkpoint_every steps)
  long checkpoint_every = 0;
  std::string resume;
  std::string results;  // JSON
  bool quiet = false;   // print nothing
  std::string label;    // experiments: only a live line, prefixed "[label] "
  text::LMDataOptions data;

  nlohmann::json to_json() const;
  void validate() const;  // throws naming the bad flag
};

struct TrainHooks {
  // After backward and clipping, before the optimizer step: gradients are readable.
  std::function<void(long step, nn::LanguageModel&)> after_backward;
  // After each epoch's validation (the model holds the epoch's final parameters).
  std::function<void(size_t epoch, nn::LanguageModel&)> after_epoch;
};

struct RunResult {
  nlohmann::json json;  // everything, as written to the results file
  double valid_ppl = 0, test_ppl = 0;
  std::unique_ptr<nn::LanguageModel> model;  // with the best validation parameters
};

// text::load_lm_data, with rank 0 first under MPI (it may fetch the corpus into the shared
// cache), then the other ranks.
text::LMData load_data(const text::LMDataOptions& options);

// Builds the model (loading and aligning pretrained vectors if the mode needs them).
std::unique_ptr<nn::LanguageModel> build_model(const TrainConfig& config, const text::LMData& data,
                                               nlohmann::json* log = nullptr);

// Mean negative log-likelihood per token over the targets in `range` (each predicted once,
// from real preceding context), under NoGrad.
double evaluate_nll(nn::LanguageModel& model, const text::LMData& data, const text::Range& range,
                    size_t batch_rows);

// The gradient averaging for a run under mpirun (bucket size and overlap from the config);
// null in a single process.
std::unique_ptr<dist::GradientSync> make_gradient_sync(const TrainConfig& config, const nn::LanguageModel& model);

// Forward and backward of one global batch: in one process, or (sync given) this rank's rows
// with the gradients averaged over all ranks. Returns the mean loss over the whole batch.
double forward_backward(nn::LanguageModel& model, const Ids& inputs, const Ids& targets, dist::GradientSync* sync);

RunResult train_language_model(const TrainConfig& config, const text::LMData& data, const TrainHooks& hooks = {});

// Generates `count` tokens after `prompt` (whitespace-separated words) with temperature and
// top-k (0 = all), recording no tape.
std::string sample_text(nn::LanguageModel& model, const text::Vocabulary& vocab, const std::string& prompt,
                        size_t count, float temperature, size_t top_k, uint64_t seed);

}  // namespace tg::lm
