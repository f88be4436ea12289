// What exp_lifecycle measures of an input embedding table while a model trains, as training
// hooks: per step, the rows with a non-zero gradient and the rows whose values the optimizer
// changed (bitwise; with Adam's momentum these differ) and how far the step moved the batch's
// rows against the others (the size of each row's update, not only whether it changed); per
// epoch, the rows touched and each
// frequency band's cosine drift from the initial table; at the end, the tables' neighbours
// and word similarity. Its counters go into checkpoints, so a resumed run counts every step
// once.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "text/similarity.hpp"
#include "train/trainer.hpp"

namespace tg::experiments {

// What became of a table's rows by the end of a run: the probe's census, under "table" in its
// life-cycle results. Written and read through one field table (lifecycle_probe.cpp), so the
// report reads, typed, what the probe wrote; a value of the wrong kind is refused, naming it.
struct Quartiles {
  double q1 = 0, median = 0, q3 = 0;
};
struct NormBin {  // the rows whose training count is min_count to max_count
  size_t min_count = 0, max_count = 0, rows = 0;
  Quartiles input_norm, output_norm;
};
struct FlaggedToken {
  std::string token;
  size_t count = 0;  // in the training split
  double score = 0;
};
// The search for under-trained tokens from the tables alone (undertrained_indicator), scored as
// a detector of the rows the training split never has.
struct UnderTrained {
  size_t reference = 0, flagged = 0, flagged_unseen = 0;  // flagged: at the reference's 10th
  double threshold = 0, precision = 0, recall = 0;        // percentile or above
  // NaN where the training split has every token: nothing to detect (written as null).
  double auc_output_cosine = 0, auc_low_input_norm = 0;
  std::vector<FlaggedToken> flagged_seen;  // the top flagged tokens that do occur
};
struct TableCensus {
  size_t rows = 0, rows_in_training = 0, unseen_rows = 0, unseen_rows_unchanged = 0;
  // Rows given a gradient at some step; none for a run resumed from a checkpoint that did not
  // count them (written as null).
  std::optional<size_t> rows_with_gradient;
  double unseen_rows_drift = 0;  // their mean cosine drift from initialisation
  std::vector<NormBin> norms_by_count;
  std::optional<UnderTrained> under_trained;  // a BPE's, with unreachable tokens to start from

  // The median input-row norm of the rows the training split never has (the count-0 bin).
  std::optional<double> unseen_input_norm() const;
  nlohmann::json to_json() const;
  static TableCensus from_json(const nlohmann::json& j, const std::string& where);
  // A life cycle run's census (its "table"), if it measured one; throws like from_json, `where`
  // naming the table.
  static std::optional<TableCensus> of_run(const nlohmann::json& run, const std::string& where);
};

class LifecycleProbe {
 public:
  // `initial`: the table before training; `train_count`: each id's count in the training split;
  // `unk`: the id of <unk> (-1 for a BPE, which has none); `probes`, `k`, `word2vec`: whose
  // neighbours the results show, beside word2vec's; `words`: each id's name (its spelling,
  // text::Vocabulary::spelling, as word2vec's vectors name it).
  // `unused_reference`: ids known unused without looking at the data (a BPE's unreachable
  // tokens; empty for words), the reference of the under-trained token search.
  LifecycleProbe(Tensor initial, std::vector<size_t> train_count, int32_t unk,
                 std::vector<std::string> probes, size_t k, const text::VectorIndex& word2vec,
                 std::vector<std::string> words, std::vector<int32_t> unused_reference = {});
  LifecycleProbe(const LifecycleProbe&) = delete;
  LifecycleProbe& operator=(const LifecycleProbe&) = delete;

  // Hooks that call this probe: it must outlive the training run.
  train::TrainHooks hooks();

 private:
  void after_backward(long step, nn::LanguageModel& m);
  void after_step(nn::LanguageModel& m);
  void measure_movement(const Tensor& table);  // after_step's sizes of the updates
  void after_epoch(nn::LanguageModel& m, nlohmann::json& record);
  void after_training(nn::LanguageModel& m, nlohmann::json& results) const;
  double wordsim(const Tensor& table) const;  // WordSim-353 Spearman of a table's rows
  // The trained tables' rows: which ever had a gradient, what became of the unseen ones, the
  // norms by training frequency and the under-trained tokens found from the tables alone.
  TableCensus census(nn::LanguageModel& m) const;
  nlohmann::json save_state() const;
  void load_state(const nlohmann::json& state);

  Tensor initial_;
  std::vector<size_t> train_count_;
  int32_t unk_;
  std::vector<std::string> probes_;
  size_t k_;
  const text::VectorIndex& word2vec_;
  std::vector<std::string> words_;
  std::vector<int32_t> unused_reference_;
  size_t vocab_;
  std::vector<bool> touched_epoch_, touched_step_, touched_ever_;
  std::vector<float> before_step_;  // the table before the optimizer step
  double rows_sum_ = 0;             // share of rows with a gradient, summed over the steps
  long steps_ = 0;
  double changed_sum_ = 0;   // share of rows the step changed, summed over changed_steps_
  long changed_steps_ = 0;   // fewer than steps_ for a run resumed from an older checkpoint
  double changed_last_ = 0;  // the last step's share
  // How far the steps moved the rows, summed over moved_steps_ (steps that moved any row):
  // the batch's rows' share of the step's squared update, and the mean update of a batch row
  // and of another row, each relative to that row's norm before the step.
  double batch_share_sum_ = 0, batch_move_sum_ = 0, other_move_sum_ = 0;
  long moved_steps_ = 0, other_steps_ = 0;  // other_steps_: steps with a row outside the batch
  bool ever_complete_ = true;  // false when resumed from a checkpoint without touched_ever
};

// Land and Bartolo's (2024) indicator of under-trained tokens from a trained output matrix
// [V, d] alone: each row's cosine similarity, once the rows are centred and their first
// principal component removed, to the mean of the rows of `reference` (ids known to be unused).
// Unused rows only ever get the softmax's push away from every context, so they share a
// direction; higher means more likely under-trained.
std::vector<double> undertrained_indicator(const Tensor& table,
                                           const std::vector<int32_t>& reference);

// The probability that a random `positive` id scores higher than a random other id (ties half):
// the area under the ROC curve of `score` as a detector of `positive`.
double roc_auc(const std::vector<double>& score, const std::vector<bool>& positive);

}  // namespace tg::experiments
