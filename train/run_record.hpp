// A run file: what a run was and what it gave, as every program that trains or counts a model
// writes it (train_lm and the study's programs through the Trainer, ngram) and as the report,
// compare_run and the studies read it back. One struct, written and read through one field
// table (train/fields.hpp, as the configuration is), with a schema version:
//
//   schema 2  this struct; "provenance" names the commit, whether the tree was dirty, the build,
//             the full command line, the CPU and the BLAS and oneDNN builds.
//   schema 1  (no "schema" key) files written before it: a top-level "commit" (or the
//             "added_in_commit" scripts/trace_provenance.py gave files that named none) is
//             read as the provenance's commit; their command line is not known.
//
// The fields a program or a hook adds beyond these (the lifecycle probe's measurements, a
// study's test losses by block and band, a user's metrics, ngram's mixture) are kept in
// `extra`, written beside the typed ones; whoever adds a field reads it back
// (experiments/test_losses.hpp: TestLosses::of_run).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tg::train {

// Where a result comes from.
struct Provenance {
  std::string commit;  // of the build, without "-dirty"; "" when not known
  bool dirty = false;  // built from a tree with uncommitted changes
  std::string build_type;
  std::vector<std::string> command;  // the command line; empty where not recorded (schema 1)
  std::string cpu, instruction_sets, openblas, onednn;

  static Provenance of_this_process();  // this program's build, command line and machine
  std::string commit_shown() const { return commit + (dirty ? "-dirty" : ""); }
  nlohmann::json to_json() const;
};

// The data a run was trained and evaluated on.
struct DataRecord {
  std::optional<std::string> fingerprint;  // text::fingerprint; files of older versions lack it
  std::string description;
  size_t vocab = 0, train_tokens = 0, valid_tokens = 0, test_tokens = 0;
};

struct RunRecord {
  static constexpr int kSchema = 2;
  int schema = kSchema;
  std::string program = "train_lm";  // the program that wrote it (a Trainer run: train_lm)
  std::optional<std::string> version;
  Provenance provenance;
  // As the program's configuration writes it: TrainConfig::to_json for a trained run (read
  // back through TrainConfig::from_json, so a bad key is refused naming it).
  nlohmann::json config = nlohmann::json::object();
  DataRecord data;
  // Where and how it ran ("blas" and "simd": what a bit-for-bit comparison needs to be equal).
  std::optional<uint64_t> seed;
  std::optional<size_t> threads, mpi_ranks;
  std::optional<std::string> blas, simd;
  std::optional<size_t> trainable_params, total_params, steps_per_epoch, tokens_per_step;
  // What it gave. A run stopped by a signal has no perplexities, and names the signal.
  std::optional<double> valid_ppl, test_ppl, train_ppl;
  std::optional<double> valid_ppl_per_word, test_ppl_per_word;  // subword data
  std::optional<nlohmann::json> tokenizer;                      // subword data: name, tokens, hash
  std::optional<size_t> steps, best_epoch;
  std::optional<bool> stopped_early;
  std::optional<std::string> interrupted;
  // Seconds: of the optimisation steps, of the run from its start (every sitting), of the
  // process's CPU over the same span; the median step's throughput.
  std::optional<double> train_seconds, wall_s, cpu_s, train_tokens_per_s;
  // The curves: one object per epoch (epoch, step, complete, train_loss, valid_loss, valid_ppl,
  // lr, elapsed_s, and what an after_epoch hook adds), per --eval-every evaluation.
  std::optional<nlohmann::json> epochs, evals;
  nlohmann::json extra = nlohmann::json::object();

  nlohmann::json to_json() const;
  // Refuses a value of the wrong kind, naming `where` (the file) and the field; reads schema 1.
  static RunRecord from_json(const nlohmann::json& j, const std::string& where);
  // Whether j is a run file (a JSON object with a configuration), not a summary, a study file
  // or a vector log. A run file without "program" was written by train_lm's Trainer.
  static bool is_run_file(const nlohmann::json& j);
};

}  // namespace tg::train
