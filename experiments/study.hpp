// What the experiment binaries share: pretraining word2vec on exactly the language model's
// training tokens, running one configuration with a labelled progress line and a summary
// line, and aggregating runs over seeds.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "text/word2vec.hpp"
#include "train/trainer.hpp"

namespace tg::experiments {

// A row of a study: how its model's token table is made (a registered kind, tied or not, and
// which word2vec vectors).
struct Mode {
  std::string name;                   // "learned", "learned-tied", "frozen-pretrained", ...
  std::string embedding = "learned";  // the kind of token table (nn/token_table.hpp)
  bool tied = false;
  bool full_vectors = false;  // word2vec trained on the full training split, not the subset
};
// Comma-separated rows, each a registered kind of token table (learned, frozen-random,
// frozen-pretrained, finetune-pretrained or a user's), KIND-tied for a kind that can tie, or
// KIND-full for a kind that loads vectors (the data-size sweep alone, `full_variants`: word2vec
// on the full split). A mode given twice is refused.
std::vector<Mode> parse_modes(const std::string& list, bool full_variants = false);

// One run of a study: the base configuration with `model`, `mode`'s table and `seed`; the
// NPLM's hidden width follows d_model, so that one architecture can tie its output matrix to the
// table (U = C).
train::TrainConfig run_config(const train::TrainConfig& base, const std::string& model,
                              const Mode& mode, uint64_t seed);

// Trains skip-gram word2vec (dimension = d_model) on the training range of `data` (words as
// the LM sees them, rare ones as <unk>), writes it to `path` (binary) and returns a log entry
// with the time, WordSim-353 Spearman of the vectors and the file's hash. A study invoked again
// reuses the file when its log records the same options and tokens and the file still has the
// hash it was written with (a file replaced since is refused, naming both hashes).
nlohmann::json pretrain_word2vec(const text::LMData& data, text::Word2VecOptions options,
                                 const std::string& path);

// Writes `value` to `path` atomically, from rank 0 only under MPI.
void write_json(const std::string& path, const nlohmann::json& value);

// The finished run in json_path (its results, with config's settings; throws when the
// settings differ), or null when there is none or it lacks `hooks_key` (see run_one).
nlohmann::json finished_run(const train::TrainConfig& config, const std::string& json_path,
                            const std::string& hooks_key = "");

// Writes study.json into a finished study's folder that has none (made before the programs
// declared their studies): its axes and its family, every other mode against `reference`
// within each group (exp_embeddings: each model; exp_data_size: each model and share), as the
// report tested them, marked as written after the runs. False, writing nothing, for a folder
// with a study.json already, or whose summary is not of those programs.
// Throws, naming the file, for a summary that is not JSON or whose run keys are neither numbers
// nor names.
bool declare_finished_study(const std::filesystem::path& folder, const std::string& reference);

// declare_finished_study for every folder below `results` (links not followed); the study
// files written, in order.
std::vector<std::filesystem::path> declare_finished_studies(const std::filesystem::path& results,
                                                            const std::string& reference);

// The keys a study program's summary groups its runs by, which with the seed name one run:
// {"model", "mode"} for exp_embeddings ("embeddings"), with "fraction" for exp_data_size
// ("data_size"); empty for any other program.
std::vector<std::string> group_keys_of(std::string_view program);

// What invoking the study again would do with a run, and the line that says so: "done: test
// ppl 261.2, best epoch 12", "resumes from RUN.ckpt" or "to train", the last two followed by
// "(being trained by process N)" while another process holds RUN.lock.
struct RunStatus {
  enum class Next { done, resume, train };
  Next next;
  std::string text;
  double cpu_seconds = 0;  // a finished run's CPU time (its cpu_s); 0 when not recorded
};

// The status of the run whose JSON is json_path. Reads files only. Throws, as finished_run
// does, when json_path holds a finished run with other settings.
RunStatus run_status(const train::TrainConfig& config, const std::string& json_path,
                     const std::string& hooks_key = "");

// A line counting the runs that are done, to resume and to start in `folder`, then each run's
// label and status, one a line, and what the runs not done would cost at the finished runs'
// mean CPU time.
std::string describe_runs(const std::string& folder,
                          const std::vector<std::pair<std::string, RunStatus>>& runs);

// Runs one configuration, prints a one-line summary, writes the run's JSON to json_path (its
// checkpoint beside it, its per-token losses into the folder config.token_nll names, if any).
// Paths inside json_path's folder are recorded relative to it, so that the folder can move.
// A finished run there with the same settings is returned instead, unless it lacks the
// results key `hooks_key` that the hooks add (made without them): that one is trained again.
nlohmann::json run_one(train::TrainConfig config, const text::LMData& data,
                       const std::string& label, const std::string& json_path,
                       const train::TrainHooks& hooks = {}, const std::string& hooks_key = "");

// A study's runs, planned before any trains. Its summary lists the finished runs in plan order
// from the start (a study resumed with more seeds keeps the rows it has) and is written again
// after each run.
class Plan {
 public:
  struct Run {
    train::TrainConfig config;
    std::string label, file;
    nlohmann::json keys;  // what names the run in the summary: model, mode, seed, ...
    // Called when this process is about to train the run (not for a finished run or one
    // another process holds): what only training needs, e.g. its word2vec vectors.
    std::function<void()> prepare = {};
    // The training hooks and the results key they add (see run_one): a finished run without
    // it was made without them and is trained again.
    train::TrainHooks hooks = {};
    std::string hooks_key = {};
  };
  // What a run's summary entry takes from its results (added to its keys and file).
  using Entry = std::function<nlohmann::json(const nlohmann::json& results)>;

  // The summary is written to summary_path with "runs" (the entries) and "rows" (them
  // aggregated over seeds by group_keys, for metrics).
  Plan(std::string summary_path, nlohmann::json summary, Entry entry,
       std::vector<std::string> group_keys, std::vector<std::string> metrics);

  void add(Run run) {
    runs_.push_back(std::move(run));
    entries_.emplace_back();
  }
  const std::vector<Run>& runs() const { return runs_; }
  nlohmann::json& summary() { return summary_; }

  // Each run in the order the programs train them (seed-major) with its run_status, after a
  // line that counts them (--dry-run).
  std::string describe() const;
  // Declares the study before its runs: writes study.json beside the summary with its axes
  // (each run key's values, the seeds), its reference arm and the family of comparisons the
  // report will test (every other mode against `reference` within each group of runs that
  // differ only in mode and seed), each comparison with the time and commit that declared it.
  // An invocation that adds modes or seeds to a study appends to it; one naming another
  // reference is refused. The report renders a folder with a study.json under any name.
  void declare(const std::string& reference);
  // Lists the runs that earlier invocations finished and writes the summary.
  void collect_finished();
  // Trains run i, lists it and writes the summary; a finished run (collect_finished read
  // it, or run_one finds it) is not trained again. A stop signal ends the study (train::
  // Interrupted) after the summary is written: a run that the signal caught in its final
  // evaluation is finished, and listed. Several processes can share a study's
  // folder, one per core or machine: a process claims run i before training it (a lock on
  // RUN.lock beside RUN.json) and skips a run another process holds; invoked again, a
  // process finishes what the others left.
  void train(size_t i, const text::LMData& data);
  // After the runs: lists, on stderr, the runs that another process was training when this one
  // reached them and that have not finished since (their rows are missing from the table this
  // process prints; the summary lists them when the process that trains them writes it).
  void say_unfinished() const;

 private:
  nlohmann::json entry(size_t i, const nlohmann::json& results) const;  // run i's summary entry
  void list(size_t i, const nlohmann::json& results);
  void save();

  std::string summary_path_;
  nlohmann::json summary_;
  Entry entry_;
  std::vector<std::string> group_keys_, metrics_;
  std::vector<Run> runs_;
  std::vector<nlohmann::json> entries_;  // each run's summary entry; null: not finished
  std::vector<size_t> held_elsewhere_;   // runs skipped because another process held them
};

// Mean, sample standard deviation, min and max of each metric over runs grouped by the
// values of `keys` (e.g. {"model", "mode"}), in first-seen order.
nlohmann::json aggregate(const std::vector<nlohmann::json>& runs,
                         const std::vector<std::string>& keys,
                         const std::vector<std::string>& metrics);

std::vector<std::string> split_commas(const std::string& list);  // "a,b" -> {"a", "b"}
std::string join_commas(const std::vector<std::string>& parts);  // {"a", "b"} -> "a,b"
std::string data_path(const std::string& name);  // an evaluation set: text::evaluation_file
void make_dirs(const std::string& dir);

}  // namespace tg::experiments
