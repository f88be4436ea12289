// The report's sections, one file each (section_*.cpp), in the order REPORT.md shows them.
// Each is a pure function of the results it is given and returns "" when they hold nothing for
// it, so a partial results folder renders the sections it can.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/report/analysis.hpp"

namespace tg::experiments::report {

// section_calibration.cpp
// Our n-gram baselines (build/bin/ngram, the files of ngram/) next to Bengio et al.'s rows for
// the same models on their copy of Brown: the ratio measures how much harder our split is.
std::string calibration_section(const FolderFiles& ngram);
// "0.959 to 0.978": `ours` on the paper's scale, one end per end of the calibration range; "-"
// without n-grams.
std::string calibrated_range(const Calibration& calibration, double ours, int decimals);
// The NPLM rows of scripts/paper_nplm.sh (the files of paper_nplm/) next to the paper's.
std::string paper_nplm_section(const FolderFiles& paper, const Calibration& calibration);
// A model on the scale of the one-table section: its test perplexity over seeds, and Bengio
// et al.'s for the same model (0: they have none).
struct ScaleRow {
  std::string model;
  size_t seeds = 0;                    // 0: no seed (the n-grams are deterministic)
  double mean = 0, sd = 0, paper = 0;  // test perplexity per word
  std::string tokens = "words";        // what the model predicts: words, or a BPE's tokens
  std::string data = {};               // its data's description (the runs' "data")
  double spelled = 0;  // mean with each <unk> spelled out (a BPE's: mean); 0: not known
  std::vector<double> per_seed = {};  // each finished run's test perplexity per word
};
// What spelling out each <unk> costs a word-level model (the n-grams' "unk_spelling", from
// `ngram --unk-spelling-order`): its per-word test perplexity times `factor`, on the data that
// `data` describes.
struct UnkSpellingCost {
  std::string data;
  double factor = 0;
  size_t order = 0, train_unk = 0, test_unk = 0, test_words = 0;
  double nats_per_unk = 0;  // the test split's spelling loss per <unk>
  bool known() const { return factor > 0; }
};
UnkSpellingCost unk_spelling_cost(const FolderFiles& ngram);
std::vector<ScaleRow> scale_rows(const FolderFiles& ngram, const FolderFiles& paper,
                                 const std::vector<ConvergedStudy>& converged);
std::string one_scale_section(const std::vector<ScaleRow>& rows, const Calibration& calibration,
                              const UnkSpellingCost& spelling);
// The conclusions' line on each model read in subword tokens against the same model in words:
// per word, and with the word-level model's <unk> spelled out, each a Welch t-test over the
// seeds, Holm-corrected across the lines (section_conclusions.cpp).
std::string words_against_subwords(const std::vector<ScaleRow>& scale);

// section_converged.cpp
// The five modes trained to early stopping (scripts/converged.sh), model by model.
// One study's folder (root/sub): its setup, the rows' table, each row against `reference`
// with its verdict (Holm over `family`, as the method sentence names it), the epochs, the
// frequency bands and (with `plots`) the validation curves.
std::string study_block(const std::filesystem::path& root, const std::filesystem::path& sub,
                        const Study& study, const std::string& reference, const std::string& family,
                        bool plots);

// Every study folder under dir that declares itself (study.json, written by the experiment
// programs before their first run) and is not one of the folders the sections above render by
// name: each with its own family of comparisons, Holm-corrected within it. Empty when none.
std::string declared_studies_section(const std::filesystem::path& dir, bool plots);

// section_scaling.cpp
// One point of a sweep: a size's runs (x its body, every parameter but the vocabulary
// matrices) or a data share's (x its training tokens), with each mode's test perplexity by seed.
struct Point {
  std::string header;  // its column in the effects table
  double x = 0;
  std::map<std::string, std::map<size_t, double>> ppl = {};
};
// An effect across a sweep's points: per seed, test perplexity of the arm over the reference's
// less 1, and its least-squares line against log10 x.
struct Trend {
  std::string effect;  // its name in the tables: the mode, with the size in the data sweep
  std::vector<std::vector<double>> by_size = {};  // the effects at each point, in their order
  std::vector<double> x = {}, y = {};             // log10 of the point's x, per-seed effect
  size_t sizes = 0;                               // points with runs
  LineFit fit = {};
  double holm_p = 1;  // over the family the trend file declared
};
// The sweep across model sizes as dir/scaling/trends.json declared it: its sizes with finished
// runs, and each declared effect's trend, Holm-corrected over them. No sizes without the file
// or a finished size.
struct SizeTrends {
  nlohmann::json declaration;  // trends.json
  std::vector<Point> sizes = {};
  std::vector<Trend> trends = {};
};
SizeTrends size_trends(const std::filesystem::path& dir);
// The data sweep as dir/scaling/trends_data.json declared it: at each of its sizes, the points
// with runs (its shares and the whole split's, x their training tokens) and each declared
// effect's trend against log10 training tokens, Holm-corrected over all sizes' effects together
// (at least the family the file declared). No sizes without the file.
struct DataTrends {
  nlohmann::json declaration;  // trends_data.json
  std::vector<std::string> sizes = {};
  std::vector<std::vector<Point>> points = {};  // per size
  std::vector<std::vector<Trend>> trends = {};  // per size, one per declared effect
  size_t family = 0;                            // the slopes Holm's correction is over
  double alpha = 0.05;
};
DataTrends data_trends(const std::filesystem::path& dir);
// The study across scale (scripts/scaling.sh) rendered from size_trends: each effect per seed
// at every size of the model, and its line against log10 body parameters with a t interval on
// the slope. Empty without the file or a finished size.
std::string scaling_section(const std::filesystem::path& dir, bool plots);

// section_subwords.cpp
// Words against subwords, fairly (scripts/subwords.sh): with dir/subwords/comparisons.json
// (declared before the runs), each arm's per-word test perplexity in words against the same arm
// in each tokenization, Welch's test over seeds on log perplexity with its t interval, Holm over
// the declared family. Empty without the file or a subword run.
std::string subwords_section(const std::filesystem::path& dir);

std::string converged_section(const std::filesystem::path& dir,
                              const std::vector<ConvergedStudy>& converged, bool plots);
// Tying with one decay policy: learned-tied against the untied GPT whose vocabulary matrices
// have no weight decay either, paired by seed, one row per pairing of kTiePairings with runs.
// And whether tying's effect changes with the width: per seed, test ppl(tied) / ppl(untied) - 1
// at each width; Welch's test of d256's effects against d128's (the seeds of two widths are
// not paired), in Holm's family like the rows; its per_seed.mean is the mean effect at d256
// minus the one at d128 (negative: tying helps more at d256) and its interval Welch's 95% t
// interval.
struct TiePairing {
  const char* model;   // the row's name
  const char* tied;    // converged/<tied>: its learned-tied runs
  const char* untied;  // converged/<untied>: its learned runs, trained with --table-decay none
  const char* source;  // where the runs are, in the section's words
};
inline constexpr TiePairing kTiePairings[] = {
    {"gpt d128", "gpt", "gpt_table_decay_none",
     "at d128, section 1's learned-tied runs against `converged/gpt_table_decay_none/` (section "
     "1's GPT, untied, trained with `--table-decay none`)"},
    {"gpt d256", "gpt_d256", "gpt_d256",
     "at d256, `converged/gpt_d256/` (both modes trained with `--table-decay none`)"},
    {"gpt d128, Brown BPE 8,192", "gpt_bpe8k", "gpt_bpe8k_table_decay_none",
     "in a byte-level BPE of 8,192 tokens trained on Brown, section 1's learned-tied runs of "
     "`converged/gpt_bpe8k/` against `converged/gpt_bpe8k_table_decay_none/` (untied, trained "
     "with `--table-decay none`)"},
    {"gpt d128, GPT-2 BPE 50,257", "gpt2", "gpt2_table_decay_none",
     "in GPT-2's 50,257 tokens, section 1's learned-tied runs of `converged/gpt2/` against "
     "`converged/gpt2_table_decay_none/` (untied, trained with `--table-decay none`)"}};
struct TieEffect {
  const TiePairing* pairing = nullptr;
  std::vector<double> effects;          // relative effect, seed by seed
  double untied_ppl = 0, tied_ppl = 0;  // mean test perplexity of each over those seeds
};
struct FairTie {
  std::vector<Comparison> rows;     // empty without runs
  std::vector<TieEffect> pairings;  // those with runs of both, in kTiePairings' order
  Comparison by_width;              // seeds 0 until both widths have two
  // The pairings' runs, as rows of model `pairing.model`, and the studies that hold the files
  // of those not in section 1 (a map: its nodes stay put when a FairTie moves).
  RunFiles files;
  std::map<std::string, Study> studies;
};
// The pairings' studies from converged_dir; section 1's (`converged`) as they were loaded.
FairTie fair_tie(const std::filesystem::path& converged_dir,
                 const std::vector<ConvergedStudy>& converged);
std::string fair_tie_section(const FairTie& tie);
// The conclusions' lines on it ("" without rows).
std::string fair_tie_conclusion(const FairTie& tie);
// Where tying gains or loses, by how often the target occurs in training: each converged
// model's learned-tied row of the band table against learned, from two paired seeds on.
// Descriptive: t intervals over the seeds, not corrected across the bands; a band is named
// lower or higher only when its interval excludes zero. "" when no model has such a row.
std::string tying_by_band(const std::vector<ConvergedStudy>& converged);
// bf16 against fp32: each mode of a bf16 study (converged/gpt_bf16) against the same mode of
// the fp32 study, paired by seed; change = test ppl(bf16) / test ppl(fp32) - 1 per seed, and
// whether it is within 1% (section_precision.cpp).
struct PrecisionRow {
  std::string mode;
  double fp32 = 0, bf16 = 0;  // mean test perplexity over the paired seeds
  experiments::TInterval change;
  experiments::Equivalence verdict = experiments::Equivalence::not_decided;
};
std::vector<PrecisionRow> precision_rows(const Study& fp32, const Study& bf16);
std::string precision_section(const std::vector<PrecisionRow>& rows);
std::string precision_conclusion(const std::vector<PrecisionRow>& rows);
// The data-size sweep at convergence, its 100% column from section 1's GPT runs.
std::string converged_data_size(const std::filesystem::path& root, const Study& sweep,
                                const Study& gpt, bool plots);

// section_lifecycle.cpp
std::string lifecycle_section(const nlohmann::json& summary);  // exp_lifecycle's summary.json
std::string life_cycle_conclusion(const nlohmann::json& life);
// The conclusions' lines on a life cycle's table census (converged/lifecycle_gpt2): per run,
// the rows given a gradient, what became of the never-seen ones, the under-trained search.
std::string census_conclusion(const nlohmann::json& life);
// Which rows a step changes under each optimizer (lifecycle_optimizers/<name>/, one exp_lifecycle
// run each): shares of the input table's rows, per step on average and in the last step.
struct OptimizerRows {
  std::string name;  // the run's folder
  train::TrainConfig config;
  double gradient_rows = 0, changed_rows = 0, changed_last_step = 0, test_ppl = 0;
  std::string commit;
  // How far the steps moved the rows (runs whose probe measured it): the batch's rows' share
  // of a step's squared update, and the mean update of a batch row and of another row over its
  // norm, each averaged over the steps; 0 steps: not measured.
  long movement_steps = 0;
  double batch_share = 0, batch_row_update = 0, other_row_update = 0;
};
std::vector<OptimizerRows> optimizer_rows(const std::filesystem::path& folder);
std::string optimizer_rows_section(const std::vector<OptimizerRows>& rows);
// The rows that measured how far a step moves each row (lifecycle_movement/): section 3c.
std::string movement_section(const std::vector<OptimizerRows>& rows);
std::string optimizer_rows_conclusion(const std::vector<OptimizerRows>& rows);
// AdamW against LazyAdam at convergence: section 1's learned GPT (AdamW) against the same runs
// with --optimizer lazy-adam (converged/gpt_lazy_adam), paired by seed, in Holm's family; and
// each one's learned life cycle (converged/lifecycle, converged/lifecycle_lazy_adam): how far
// the rows drift by training frequency, and how many rows a step changes.
struct LazyAdam {
  std::vector<Comparison> rows;          // "learned, lazy-adam" against learned; empty without runs
  nlohmann::json adamw_life, lazy_life;  // each life cycle's learned run (null: not run)
};
LazyAdam lazy_adam(const Study& gpt, const Study& lazy, const nlohmann::json& adamw_life,
                   const nlohmann::json& lazy_life);
std::string lazy_adam_section(const LazyAdam& lazy);
std::string lazy_adam_conclusion(const LazyAdam& lazy);

// section_compute.cpp
// The compute of the finished runs and the word2vec pretraining in one or more folders.
struct Compute {
  size_t runs = 0;
  double train_seconds = 0, word2vec_seconds = 0;
  size_t cpu_runs = 0;  // the runs that record their CPU time (cpu_s), and its sum
  double cpu_seconds = 0;
  void add(const Compute& other);
};
// What the long studies cost, folder by folder (paper_nplm/ and every folder of converged/,
// those whose runs have not finished yet included); `total` receives the sum.
std::string compute_section(const std::filesystem::path& dir, const FolderFiles& paper,
                            Compute& total);

// section_conclusions.cpp
// The long studies and baselines, each read (and compared) once, for their sections and the
// conclusions. Moved into place, never copied (a Study's files point into its own maps).
struct Findings {
  FolderFiles ngram, paper;
  std::vector<ConvergedStudy> converged;
  Study band_reruns;  // must outlive `converged` (supplement_bands)
  Study sweep;
  FairTie tie;
  std::vector<PrecisionRow> bf16;
  nlohmann::json converged_life, gpt2_life;
  LazyAdam lazy;
  Calibration calibration;
  std::vector<ScaleRow> scale;
  std::vector<OptimizerRows> optimizers;
  Compute compute;

  const Study& gpt() const { return study_of(converged, "gpt"); }
};
std::string conclusions_section(const Findings& f);

// section_reference.cpp
// Bengio et al.'s headline rows, and the best row of the short-budget runs beside them.
std::string bengio_reference_table(const nlohmann::json* embeddings,
                                   const nlohmann::json* longer = nullptr);

// section_short.cpp: the short-budget profiles of scripts/reproduce.sh, each headed as such;
// `after_converged`: the converged section of the same question precedes it.
std::string short_embeddings_section(const nlohmann::json& embeddings,
                                     const std::filesystem::path& dir, bool plots);  // 1a
std::string longer_training_section(const nlohmann::json& longer);                   // 1b
std::string reference_section(const nlohmann::json& embeddings, const nlohmann::json& longer);
std::string short_data_size_section(const nlohmann::json& size, bool after_converged,
                                    const std::filesystem::path& dir, bool plots);
// Section 3 (converged/lifecycle) and 3d, the same in GPT-2's tokens (converged/lifecycle_gpt2).
std::string converged_lifecycle_section(const nlohmann::json& life,
                                        const std::filesystem::path& dir, bool plots);
std::string gpt2_lifecycle_section(const nlohmann::json& life, const std::filesystem::path& dir,
                                   bool plots);
std::string short_lifecycle_section(const nlohmann::json& life, bool after_converged,
                                    const std::filesystem::path& dir, bool plots);

}  // namespace tg::experiments::report
