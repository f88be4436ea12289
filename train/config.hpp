// The configuration of a training run: one typed struct that every program fills from its
// flags (apps/flags.cpp converts names to enums once, at the command line) and that a results
// file and a checkpoint record as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "autograd/precision.hpp"
#include "base/enum_names.hpp"
#include "nn/gpt.hpp"
#include "nn/token_table.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"
#include "text/lm_data.hpp"

namespace tg::train {

// What a model factory gets (train/models.hpp): the architecture knobs. A user's model reads
// the ones it needs; `options` carries its own (--model-option key=value).
struct ModelConfig {
  std::string name = "gpt";  // a registered model: gpt, nplm or a user's
  size_t d_model = 128, layers = 2, heads = 4, context = 64;  // GPT
  nn::Positions positions = nn::Positions::learned;           // GPT
  size_t ngram = 5, hidden = 100;                             // NPLM
  bool direct = false;
  std::string embedding = "learned";  // a registered kind of token table (nn/token_table.hpp)
  std::string vectors;                // word2vec file for the kinds that load vectors
  bool tied = false;
  float dropout = 0.1f;
  std::map<std::string, std::string> options;
};

struct TrainConfig {
  ModelConfig model;
  // Optimisation.
  std::string optimizer = "adamw";  // a registered optimizer (train/optimizers.hpp)
  std::map<std::string, std::string> optimizer_options;  // its own settings (--optimizer-option)
  float lr = 1e-3f, weight_decay = 0.1f, momentum = 0.0f, clip = 1.0f;
  optim::TableDecay table_decay = optim::TableDecay::output;  // adamw and lazy-adam
  optim::ScheduleKind schedule = optim::ScheduleKind::cosine;
  long warmup = 100;
  float min_lr_ratio = 0.1f;  // cosine floor, as a fraction of lr
  float lr_decay = 1e-5f;     // r of the inverse schedule lr / (1 + r t)
  size_t epochs = 1;
  long steps = 0;  // > 0: train this many steps instead of whole epochs
  size_t batch = 32;
  size_t patience = 0;  // > 0: stop after this many epochs without a better validation loss
  long eval_every = 0;  // > 0: also evaluate every N steps (logged, not used for stopping)
  size_t eval_batch = 32;
  size_t valid_limit =
      0;  // > 0: per-epoch validation on the first N valid tokens (final numbers use all)
  uint64_t seed = 1;
  size_t threads = 1;
  // The matrix products' precision (autograd/precision.hpp); a Trainer resolves `automatic`
  // to what it runs, and records that.
  Precision precision = Precision::fp32;
  bool detect_anomaly = false;
  // Under mpirun (see dist/distributed.hpp).
  bool comm_overlap = true;  // reduce gradient buckets while backward runs
  float bucket_mb = 4.0f;
  // Files.
  std::string checkpoint;  // written at the end (and every checkpoint_every steps)
  long checkpoint_every = 0;
  bool checkpoint_each_epoch = false;  // also save after every epoch's evaluation
  std::string resume;
  std::string results;         // JSON
  std::string token_nll;       // JSON: each valid and test token's negative log-likelihood
  std::string export_vectors;  // word2vec text format: the trained token table's rows
  bool quiet = false;          // print nothing
  std::string label;           // experiments: only a live line, prefixed "[label] "
  text::LMDataOptions data;

  // As results files and checkpoints record it, and back: from_json refuses an unknown key or
  // a value of the wrong type, naming the key; a key it lacks keeps its default.
  nlohmann::json to_json() const;
  static TrainConfig from_json(const nlohmann::json& j);
  void validate() const;  // throws naming the bad flag
  // Throws naming the flags unless every output is a writable regular file (or a new one)
  // that is no input and no other output (base::check_outputs); --checkpoint may be --resume.
  void check_files() const;
};

// The data's keys alone (corpus, split, vocabulary options, train fraction), as to_json writes
// them: for a program that reads the same data without training (ngram).
nlohmann::json data_to_json(const text::LMDataOptions& data);

// The keys whose values a resumed run must share with its checkpoint (or, with false, those it
// may change).
std::vector<const char*> resume_keys(bool must_match = true);

// The settings in which two configurations (objects as TrainConfig::to_json writes them)
// differ, one line "\n  <key>: <a> <a_name>, <b> <b_name>" each, for the messages that refuse
// to resume or reuse a run with other settings. Compares only `keys` when given, else every key
// of either; a key one side lacks reads as its default (it was added after that side was
// written), or "none" when it has none.
std::string config_differences(const nlohmann::json& a, const nlohmann::json& b,
                               std::string_view a_name, std::string_view b_name,
                               std::span<const char* const> keys = {});

// The same for the data two runs were trained on, by their text::fingerprint: one line
// "\n  the data (corpus, split and vocabulary): fingerprint <a> <a_name>, <b> <b_name>", or
// nothing when they agree or `a` is empty (a run of an older version records none).
std::string data_difference(std::string_view a, std::string_view b, std::string_view a_name,
                            std::string_view b_name);

}  // namespace tg::train
