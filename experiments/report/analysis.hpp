// The report's statistics: each embedding mode against the reference row of the same model,
// the verdict drawn from it, and the calibration against the paper. Seed-to-seed noise comes first:
// a row is better or worse only when a paired t-test over the seeds, corrected with Holm's method
// across every comparison the report draws, says so; the interval beside it resamples seeds and
// test blocks together (experiments/significance.hpp).
#pragma once

#include <list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/enum_names.hpp"
#include "experiments/report/results.hpp"
#include "experiments/significance.hpp"

namespace tg::experiments::report {

enum class Verdict {
  better,
  worse,
  not_decided,  // the corrected test does not tell the rows apart
  one_seed,     // nothing to test yet
};
inline constexpr base::NameTable<Verdict, 4> kVerdictNames{{{Verdict::better, "better"},
                                                            {Verdict::worse, "worse"},
                                                            {Verdict::not_decided, "not decided"},
                                                            {Verdict::one_seed, "one seed"}}};

// The family-wise error rate of the report's verdicts.
inline constexpr double kAlpha = 0.05;

struct Comparison {
  RowKey key;                    // (model, mode); the reference is the same model's reference mode
  size_t seeds = 0;              // seeds both rows ran (paired by seed)
  experiments::Spread per_seed;  // test ppl(row) - test ppl(reference), seed by seed
  experiments::TTest test;       // of the per-seed differences
  // The 95% Student t interval of the per-seed differences: the one the paired t-test inverts,
  // so that it excludes zero exactly when the uncorrected test has p < 0.05.
  experiments::TInterval interval;
  double holm_p = 1;  // test.p corrected over the family (decide)
  Verdict verdict = Verdict::one_seed;
  // Not decided: the seeds at which a paired t-test of this mean difference and spread would
  // decide even under Bonferroni's correction over the family (p < 0.05 / m; Holm's never asks
  // more); 0 when not estimable (one seed, no spread, no difference) or beyond 1,000.
  size_t seeds_to_decide = 0;
};

// Each row of `files` against `reference` of the same model, over the seeds both ran; rows
// whose runs carry no test blocks are left out. Verdicts are not decided yet.
std::vector<Comparison> compare_rows(const RunFiles& files, const std::string& reference);

// Holm's correction over the whole family, then each verdict: better or worse when the
// corrected p is below kAlpha, not decided otherwise, one seed when there is nothing to test.
// `declared`: the size of the family a study declared before its runs, when some of it has no
// runs yet (those count as p = 1, so the correction is never weaker than the declared one's).
void decide(const std::vector<Comparison*>& family, size_t declared = 0);
// The report's sections whose comparisons form that family (render.cpp gathers them), as its
// method sentence names them.
inline constexpr const char* kHolmFamily = "sections 1, 1c, 2 and 3c";

// A converged study's folder, read and compared once for its section, the conclusions and
// the Compute section.
struct Study {
  nlohmann::json summary;               // null: no such study
  FolderFiles all;                      // every results file of the folder (read_folder)
  RunFiles files;                       // the summary's runs' files in `all`, by row and seed
  std::vector<Comparison> comparisons;  // each row against reference; verdicts from decide
  // The reference arm, and the family of comparisons the folder's study.json declared (none
  // without one: then every row is compared).
  std::string reference = "learned";
  std::optional<std::set<RowKey>> declared;
  // Runs trained again for their test bands (supplement_bands): the same run bit for bit, the
  // same up to rounding (its bands joined to a copy of the original, kept in `joined`), and
  // further off (not used); the largest relative difference in test perplexity of the second.
  size_t reruns_used = 0, reruns_rounding = 0, reruns_differing = 0;
  double reruns_largest_difference = 0;
  std::list<nlohmann::json> joined;  // a list: `files` points into it

  // Moved, never copied: `files` points into `all`, whose nodes a move keeps and a copy does not.
  Study() = default;
  Study(Study&&) = default;
  Study& operator=(Study&&) = default;
  Study(const Study&) = delete;
};
// A data-size sweep's rows are by share (files_by_share).
enum class StudyRows { by_mode, by_share };
// Each row compared with the same model's `reference` mode; where the folder has a study.json,
// its reference and only the comparisons it declared (the file decides, under any folder name).
Study load_study(const std::filesystem::path& folder, StudyRows rows = StudyRows::by_mode,
                 const std::string& reference = "learned");

// A study file's reference arm, how its rows are keyed, and its declared comparisons as the
// comparisons' keys (a data-size study's rows are named by model and share, "gpt 25%");
// refuses a file of another version or shape, naming it.
struct Declaration {
  std::string reference;
  StudyRows rows = StudyRows::by_mode;
  std::set<RowKey> family;
};
Declaration declaration_of(const std::filesystem::path& file);

// How many of a study's finished runs used every epoch of their budget (`epochs`, from its
// base configuration) instead of stopping early: not converged by the early-stopping rule.
struct EpochCap {
  size_t runs = 0, capped = 0, epochs = 0;
};
EpochCap epoch_cap(const Study& study);

// Runs of `study` trained again for their test bands (converged/gpt_bands: same configuration,
// seed and thread count): where a run lacks test_bands and its rerun has them with the same test
// perplexity, bit for bit (the same run, then), the rerun's file stands for it. A rerun on
// another CPU (target_clones pick each CPU's SIMD kernels) or by a later build (which sums the
// test loss by band) adds in another order, so it is the same run up to rounding: when its test
// perplexity is within kRerunTolerance of the original's, its bands join the original's other
// numbers. Further off, it is counted and not used. `reruns` must outlive `study`.
void supplement_bands(Study& study, const Study& reruns);
// Relative difference in test perplexity under which a rerun is the same run up to rounding:
// reruns that sum in another order differ by about 1e-8 after one epoch and 1e-5 to 5e-5 at
// the end (the life cycle's runs against section 1's), seeds by 0.5-1%.
inline constexpr double kRerunTolerance = 1e-3;

// Section 1's studies, each trained to early stopping in converged/<folder>, in the report's
// order (kConvergedStudies); a study without its folder has a null summary.
struct ConvergedStudy {
  std::string folder;
  std::string reads;  // what the model reads when not words ("GPT-2's 50,257 tokens"), else ""
  std::string label;  // the model, and what it reads when not words
  Study study;
};
struct ConvergedFolder {
  const char* folder;
  const char* model;
  const char* reads;
};
inline constexpr ConvergedFolder kConvergedStudies[] = {
    {"gpt", "gpt", ""},
    {"nplm", "nplm", ""},
    {"lstm", "lstm", ""},
    {"gpt2", "gpt", "GPT-2's 50,257 tokens"},
    {"gpt_bpe8k", "gpt", "a Brown BPE of 8,192 tokens"}};
std::vector<ConvergedStudy> load_converged(const std::filesystem::path& converged_dir);
// The study in converged/<folder> (an empty one when it is not among them).
const Study& study_of(const std::vector<ConvergedStudy>& studies, const std::string& folder);

// How much harder our copy of Brown's test split is than the paper's: each of our n-grams'
// test perplexity over the paper's figure for the same model (the files of ngram/; Kneser-Ney
// 3-5 and deleted interpolation 3), and their range. A figure of ours on the paper's scale is
// then a range too, one end per extreme ratio.
struct Calibration {
  std::vector<std::pair<std::string, double>> ratios;  // {"kneser-ney 5-gram", 1.027}, ...
  double low = 0, high = 0;                            // the smallest and largest ratio
  bool known() const { return !ratios.empty(); }
  // ours divided by each end of the range: {ours / high, ours / low}.
  std::pair<double, double> on_paper_scale(double ours) const { return {ours / high, ours / low}; }
};
Calibration calibration_of(const FolderFiles& ngram);

// Where a calibrated range lies against "within `tolerance` of 1": a verdict only when the whole
// range is on one side.
enum class Agreement { within, outside, straddles };
Agreement agreement(std::pair<double, double> range, double tolerance = 0.05);

// Least squares y = intercept + slope x over points (x_i, y_i), with Student t inference on
// the slope (n - 2 degrees of freedom): its (1 - alpha) interval and two-sided p, and the
// (1 - alpha) confidence band of the fitted mean at any x. Fewer than three points, or one x,
// give no inference (p = 1, the interval and band the estimate alone).
struct LineFit {
  size_t n = 0;
  double intercept = 0, slope = 0, slope_low = 0, slope_high = 0, p = 1;
  double x_mean = 0, sxx = 0, residual_sd = 0, t_critical = 0;
  double at(double x) const { return intercept + slope * x; }
  double band_half_width(double x) const;
};
LineFit fit_line(std::span<const double> x, std::span<const double> y, double alpha = 0.05);

}  // namespace tg::experiments::report
