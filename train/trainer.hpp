// The Trainer: trains any next-word model (nn/language_model.hpp) on an LMData split and
// reports perplexity. Every program that trains (train_lm, the experiments) runs through it,
// so they share one definition of a step, an epoch, early stopping, checkpoints, MPI data
// parallelism, throughput and the results file.
//
//   train::Trainer trainer(config, data);   // builds config.model.name from the registry
//   train::RunResult r = trainer.run();
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "distributed/distributed.hpp"
#include "nn/language_model.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"
#include "text/lm_data.hpp"
#include "train/batcher.hpp"
#include "train/config.hpp"
#include "train/progress.hpp"
#include "train/run_record.hpp"

namespace tg::train {

// Where user code plugs in (all optional).
struct TrainHooks {
  // After backward and clipping, before the optimizer step: gradients are readable.
  std::function<void(long step, nn::LanguageModel&)> after_backward;
  // After the optimizer step (not timed): the parameters hold the step's update.
  std::function<void(long step, nn::LanguageModel&)> after_step;
  // After each epoch's validation (the model holds the epoch's final parameters). Fields
  // added to `record` are kept in the results file's "epochs" curve: user metrics go here.
  std::function<void(size_t epoch, nn::LanguageModel&, nlohmann::json& record)> after_epoch;
  // Once training is done, with the best-validation parameters loaded, before the results
  // file is written: fields added to `results` are kept in it (a user's final analysis).
  std::function<void(nn::LanguageModel&, nlohmann::json& results)> after_training;
  // Once training is done, before after_training, with the test split's loss of each token
  // (nats, in the split's order; their mean is the log of the test perplexity): per-token
  // analyses (a bootstrap's blocks, losses by frequency band) add their fields to `results`.
  std::function<void(std::span<const double> test_nll, nlohmann::json& results)> after_test;
  // The hooks' own state (counters, accumulators) goes into every checkpoint and comes back
  // on resume, so that a resumed run's hooks see what an uninterrupted one's would.
  std::function<nlohmann::json()> save_state;
  std::function<void(const nlohmann::json&)> load_state;
};

// Everything a resumed run needs to continue exactly; saved and restored in one place.
struct TrainState {
  long step = 0;
  size_t epoch = 0, batch_in_epoch = 0;
  Generator::State epoch_gen_state{};  // the data generator at the start of the current epoch
  double best_valid = INFINITY;
  size_t since_best = 0;                           // epochs without a better validation loss
  nlohmann::json curve = nlohmann::json::array();  // one record per epoch
  nlohmann::json evals = nlohmann::json::array();  // --eval-every: {step, valid_loss, valid_ppl}
  double epoch_loss = 0.0;                         // running sum over the current epoch's batches
  size_t epoch_batches = 0;
  double train_seconds = 0.0;  // the optimisation steps, over every sitting so far
  double wall_seconds = 0.0;   // the run from start to its last checkpoint, over the sittings
  // The process's CPU time over the same span, every thread counted: the run's compute, which
  // a paused (SIGSTOP) or descheduled process does not add to, unlike its wall time.
  double cpu_seconds = 0.0;
  std::vector<Tensor> best;  // parameters at the best validation loss (model order)

  // wall_now, cpu_now: the run's wall and CPU time so far (this sitting included).
  nlohmann::json to_json(const Generator::State& next_epoch, const Generator::State& dropout,
                         double wall_now, double cpu_now) const;
  // Restores the fields; returns the dropout generator's state.
  Generator::State from_json(const nlohmann::json& j);
};

struct RunResult {
  RunRecord record;     // everything, as written to the results file
  nlohmann::json json;  // the same, as JSON
  double valid_ppl = 0, test_ppl = 0;
  std::unique_ptr<nn::LanguageModel> model;  // with the best validation parameters
};

// text::load_lm_data, with rank 0 first under MPI (it may fetch the corpus into the shared
// cache), then the other ranks.
text::LMData load_data(const text::LMDataOptions& options);

// For data in subword tokens: the tokenizer (name, size, hash) and each split's perplexity per
// word, exp(the split's total NLL / its words), the one scale models of any tokenization share.
// Word-level data, or a record without perplexities: nothing.
void add_per_word_results(RunRecord& record, const text::LMData& data);

// The record as its JSON file, written atomically.
void write_record(const std::string& path, const RunRecord& record);

// Builds config.model through the registry (train/models.hpp), loading and aligning the
// pretrained vectors when the embedding mode needs them.
std::unique_ptr<nn::LanguageModel> build_model(const TrainConfig& config, const text::LMData& data,
                                               nlohmann::json* log = nullptr);

// The gradient averaging for a run under mpirun (bucket size and overlap from the config);
// null in a single process.
std::unique_ptr<distributed::GradientSync> make_gradient_sync(const TrainConfig& config,
                                                              const nn::LanguageModel& model);

// Forward and backward of one global batch: in one process, or (sync given) this rank's rows
// with the gradients averaged over all ranks. Returns the mean loss over the whole batch.
double forward_backward(nn::LanguageModel& model, const Ids& inputs, const Ids& targets,
                        distributed::GradientSync* sync);

class Trainer {
 public:
  // Builds the model named by config.model.name; or trains `model`, built by the caller.
  Trainer(const TrainConfig& config, const text::LMData& data, TrainHooks hooks = {});
  Trainer(const TrainConfig& config, const text::LMData& data,
          std::unique_ptr<nn::LanguageModel> model, TrainHooks hooks = {});
  ~Trainer();

  // Trains (from config.resume when given), then evaluates the best-validation parameters
  // and writes config.results. Call once. Throws Interrupted (train/signals.hpp) after a
  // SIGINT/SIGTERM once the checkpoint and partial results are written, and runtime_error
  // when training diverges (the checkpoint on disk keeps the last finite state).
  RunResult run();

  nn::LanguageModel& model() { return *model_; }
  const TrainState& state() const { return state_; }
  void save_checkpoint(const std::string& path) const;  // rank 0 writes; others return
  void load_checkpoint(const std::string& path);
  // The run's wall time: its earlier sittings (up to the checkpoint resumed) and this one.
  double wall_seconds() const;
  double cpu_seconds() const;  // the same span's CPU time of the process (all threads)

 private:
  // Under MPI: throws on every rank unless all were started with rank 0's settings and data.
  void check_ranks_agree() const;
  void check_resumable(const std::string& path,
                       const std::map<std::string, std::string>& meta) const;
  [[noreturn]] void interrupt(int signal);
  void check_finite_validation(double valid) const;
  void begin_epoch();
  double train_step(size_t batch_index);  // returns the batch's mean loss
  void report_progress(double loss, size_t rows, double seconds);
  void end_epoch();
  RunResult finish();
  void record_times();  // the steps, curves and clocks so far, into record_

  TrainConfig c_;
  const text::LMData& data_;
  TrainHooks hooks_;
  RunRecord record_;
  std::unique_ptr<nn::LanguageModel> model_;
  std::unique_ptr<optim::Optimizer> opt_;
  std::unique_ptr<distributed::GradientSync> sync_;
  std::vector<std::pair<std::string, Tensor>> params_;
  Batcher batcher_;
  long per_epoch_, total_;
  optim::Schedule schedule_;
  Generator data_gen_;
  TrainState state_;
  text::Range epoch_valid_;
  bool stopped_early_ = false, chatty_;
  std::string prefix_;
  LiveLine line_;
  std::vector<double> step_times_;
  long skip_;
  double ema_ = NAN, wall_start_, cpu_start_;
  // Steps and their seconds in this process: the ETA's rate, so that time before a resume
  // (another machine, a pause) does not skew it.
  long process_steps_ = 0;
  double process_step_seconds_ = 0;
  std::string fingerprint_;
};

// Trainer(config, data, hooks).run().
RunResult train_language_model(const TrainConfig& config, const text::LMData& data,
                               const TrainHooks& hooks = {});

}  // namespace tg::train
