#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "experiments/report/format.hpp"
#include "experiments/report/plots.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Where the bands of some runs come from (supplement_bands).
std::string reruns_sentence(const Study& study) {
  const size_t used = study.reruns_used + study.reruns_rounding;
  if (used == 0 && study.reruns_differing == 0) return "";
  const auto runs = [](size_t n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); };
  std::vector<std::string> parts;
  if (study.reruns_used > 0)
    parts.push_back(runs(study.reruns_used) + " equal to the original bit for bit");
  if (study.reruns_rounding > 0)
    parts.push_back(runs(study.reruns_rounding) +
                    " on a CPU or build whose kernels sum in another order, at most " +
                    fixed(100 * study.reruns_largest_difference, 5) +
                    "% off the original's test perplexity (below " +
                    fixed(100 * kRerunTolerance, 2) +
                    "%: the same run up to rounding), their bands beside every other number of "
                    "the original");
  if (study.reruns_differing > 0)
    parts.push_back(runs(study.reruns_differing) + " further off, not used");
  std::string s = "The test bands of " + runs(used) +
                  " come from `converged/gpt_bands/` (`scripts/converged.sh --parts bands`): the "
                  "same runs trained again with the same settings, seed and thread count, ";
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return s + ".\n\n";
}

}  // namespace

std::string study_block(const fs::path& root, const fs::path& sub, const Study& study,
                        const std::string& reference, const std::string& family, bool plots) {
  if (study.summary.is_null()) return "";
  const json& summary = study.summary;
  const size_t budget = config_of(summary.at("base_config")).epochs;
  const RunClock clock = run_clock(study.files);
  const bool cpu = clock == RunClock::cpu;
  // Each row's mean time over its seeds, and by CPU time its tokens trained per CPU second.
  struct RowTime {
    double seconds = 0, tokens_per_cpu_s = 0;
  };
  std::map<RowKey, RowTime> times;
  for (const auto& [key, by_seed] : study.files) {
    if (by_seed.empty()) continue;
    double seconds = 0, tokens = 0;
    for (const auto& [seed, run] : by_seed) {
      seconds += run_seconds(*run, clock);
      tokens += run->value("steps", 0.0) * run->value("tokens_per_step", 0.0);
    }
    times[key] = {seconds / static_cast<double>(by_seed.size()), cpu ? tokens / seconds : 0};
  }
  const auto row_time = [&](const json& row) {
    const auto found = times.find({row.at("model"), row.at("mode")});
    return found == times.end() ? RowTime{} : found->second;
  };
  const EpochCap cap = epoch_cap(study);
  const std::string caps =
      cap.capped == 0 ? ""
                      : " " + std::to_string(cap.capped) + " of the " + std::to_string(cap.runs) +
                            " runs used all " + std::to_string(budget) +
                            " epochs (cap in the epochs table): not converged by that rule.";
  return markdown_code(sub.generic_string() + "/") + ": " +
         training_setup(summary, first_run_config(study.files)) +
         " A run that used fewer than its " + std::to_string(budget) +
         " epochs stopped because validation stopped improving." + caps +
         (cpu ? " Times are CPU times (all of a run's threads), which leave out the time a run "
                "was paused or shared its core."
              : "") +
         "\n\n" +
         comparison_table(
             summary,
             cpu ? TimeColumns{"CPU time (mean)", "train tokens per CPU second",
                               [&](const json& row) { return row_time(row).seconds; },
                               [&](const json& row) { return row_time(row).tokens_per_cpu_s; }}
                 : TimeColumns{"training time (mean)", "train tokens/s",
                               [&](const json& row) { return row_time(row).seconds; },
                               [](const json& row) {
                                 return row.at("train_tokens_per_s").at("mean").get<double>();
                               }}) +
         "\n" + significance_rows(study.comparisons, reference, family) +
         epochs_table(study.files, clock) + "\n" + band_table(study.files) +
         band_difference_table(study.files, reference) + reruns_sentence(study) +
         (plots ? validation_curves(summary, study.files, root, sub, CurvePanels::with_near_best)
                : "");
}

// The five modes trained to early stopping (scripts/converged.sh), model by model.
std::string converged_section(const fs::path& dir, const std::vector<ConvergedStudy>& converged,
                              bool plots) {
  std::string models;
  for (const auto& [folder, reads, label, study] : converged)
    models +=
        study_block(dir, fs::path("converged") / folder, study, "learned", kHolmFamily, plots);
  if (models.empty()) return "";
  return "## 1. At convergence: frozen pretrained vs learned embeddings (and tied vs untied)\n\n"
         "`scripts/converged.sh`. Every number is of the parameters of the best validation "
         "epoch.\n\n" +
         models;
}

namespace {

constexpr const char* kUntiedNoDecay = "learned, no table decay";

// The rows of `study` in `mode`, renamed (model `model`, mode `as`), into `files`.
void add_rows(RunFiles& files, const Study& study, const std::string& mode,
              const std::string& model, const std::string& as) {
  for (const auto& [key, by_seed] : study.files)
    if (key.second == mode) files.push_back({{model, as}, by_seed});
}

// Per seed both ran, test ppl(tied) / ppl(untied) - 1; and the two rows' mean test
// perplexities over those seeds.
TieEffect tie_effect(const RunFiles& files, const TiePairing& pairing) {
  const std::map<size_t, const json*>*tied = nullptr, *untied = nullptr;
  for (const auto& [key, by_seed] : files)
    if (key.first == pairing.model) (key.second == kUntiedNoDecay ? untied : tied) = &by_seed;
  TieEffect tie;
  tie.pairing = &pairing;
  if (!tied || !untied) return tie;
  for (const auto& [seed, run] : *tied)
    if (const auto other = untied->find(seed); other != untied->end()) {
      const double tied_ppl = run->at("test_ppl").get<double>(),
                   untied_ppl = other->second->at("test_ppl").get<double>();
      tie.effects.push_back(tied_ppl / untied_ppl - 1);
      tie.untied_ppl += untied_ppl;
      tie.tied_ppl += tied_ppl;
    }
  if (!tie.effects.empty()) {
    tie.untied_ppl /= static_cast<double>(tie.effects.size());
    tie.tied_ppl /= static_cast<double>(tie.effects.size());
  }
  return tie;
}

// Welch's test of tying's effect at d256 against d128 (the seeds of two widths are not paired).
Comparison width_comparison(const std::vector<double>& narrow, const std::vector<double>& wide) {
  Comparison c;
  c.key = {"gpt d256 against d128", "tying's effect"};
  c.seeds = std::min(narrow.size(), wide.size());
  c.test = experiments::welch_t_test(wide, narrow);
  c.per_seed.mean = experiments::spread_of(wide).mean - experiments::spread_of(narrow).mean;
  // Welch's interval: the difference of the means plus or minus t * its standard error.
  const double half = c.test.t == 0 || !std::isfinite(c.test.t)
                          ? 0
                          : std::fabs(c.per_seed.mean / c.test.t) *
                                experiments::student_t_critical(0.05, c.test.df);
  c.interval.low = c.per_seed.mean - half;
  c.interval.high = c.per_seed.mean + half;
  return c;
}

// Welch's verdict on tying's effect at two widths, in words.
std::string width_sentence(const Comparison& c) {
  const std::string verdict =
      c.verdict == Verdict::not_decided ? "not decided"
      : c.verdict == Verdict::better    ? "tying helps more at the larger width"
      : c.verdict == Verdict::worse     ? "tying helps less at the larger width (or hurts)"
                                        : "one seed";
  // A difference of two percentages, in percentage points.
  const auto points = [](double share) { return (share > 0 ? "+" : "") + fixed(100 * share, 2); };
  return c.key.first + ": " + points(c.per_seed.mean) + " percentage points (95% interval " +
         points(c.interval.low) + " to " + points(c.interval.high) +
         "; Welch's t-test, the seeds of two widths not being paired: p " + p_value(c.test.p) +
         ", Holm " + p_value(c.holm_p) + "): " + verdict + ".";
}

}  // namespace

std::string fair_tie_conclusion(const FairTie& tie) {
  if (tie.rows.empty()) return "";
  std::string out =
      "- **Tying with one decay policy** (section 1c), learned-tied against the untied GPT "
      "whose vocabulary matrices have no weight decay either:\n" +
      verdict_lines(tie.rows, true);
  if (tie.by_width.seeds >= 2)
    out += "  - does tying's effect change with the width? " + width_sentence(tie.by_width) + "\n";
  for (const BandDifferences& row : band_differences(tie.files, kUntiedNoDecay))
    if (row.seeds >= 2)
      out += "  - by band, " + row.key.first + " (" + std::to_string(row.seeds) +
             " seeds; tied minus untied, nats, 95% t intervals not corrected across the bands or "
             "the comparisons, exploratory): " +
             band_verdicts(row) + "\n";
  return out;
}

FairTie fair_tie(const fs::path& converged_dir, const std::vector<ConvergedStudy>& converged) {
  FairTie tie;
  // Section 1's studies as loaded (with their supplemented bands); the others read here.
  const auto study = [&](const std::string& folder) -> const Study& {
    if (const Study& s = study_of(converged, folder); !s.summary.is_null()) return s;
    if (!tie.studies.contains(folder))
      tie.studies.emplace(folder, load_study(converged_dir / folder));
    return tie.studies.at(folder);
  };
  for (const TiePairing& p : kTiePairings) {
    const Study &tied = study(p.tied), &untied = study(p.untied);
    if (tied.summary.is_null() || untied.summary.is_null()) continue;
    add_rows(tie.files, untied, "learned", p.model, kUntiedNoDecay);
    add_rows(tie.files, tied, "learned-tied", p.model, "learned-tied");
  }
  tie.rows = compare_rows(tie.files, kUntiedNoDecay);
  for (const TiePairing& p : kTiePairings)
    if (std::ranges::find(tie.rows, p.model, [](const Comparison& c) { return c.key.first; }) !=
        tie.rows.end())
      tie.pairings.push_back(tie_effect(tie.files, p));
  const auto effects_of = [&](std::string_view model) -> const std::vector<double>* {
    for (const TieEffect& e : tie.pairings)
      if (e.pairing->model == model) return &e.effects;
    return nullptr;
  };
  if (const auto* narrow = effects_of("gpt d128"), *wide = effects_of("gpt d256"); narrow && wide)
    tie.by_width = width_comparison(*narrow, *wide);
  return tie;
}

std::string fair_tie_section(const FairTie& tie) {
  if (tie.rows.empty()) return "";
  std::string sources, models;
  for (const TieEffect& e : tie.pairings) {
    sources += (sources.empty() ? "" : "; ") + std::string(e.pairing->source);
    const experiments::TInterval t = experiments::t_interval(e.effects);
    models +=
        "| " + std::string(e.pairing->model) + " | " + std::to_string(e.effects.size()) + " | " +
        fixed(e.untied_ppl, 1) + " | " + fixed(e.tied_ppl, 1) + " | " + signed_percent(t.mean) +
        (e.effects.size() > 1 ? " (" + signed_percent(t.low) + " to " + signed_percent(t.high) + ")"
                              : "") +
        " |\n";
  }
  std::string out =
      "## 1c. Tying with one decay policy\n\n"
      "Learned-tied against the untied GPT whose token table and output matrix have no weight "
      "decay either, as for the tied model, whose one table is an embedding: " +
      sources + ". Seed by seed.\n\n" +
      significance_rows(tie.rows, "untied (" + std::string(kUntiedNoDecay) + ")") +
      "Tying's effect on test perplexity, row by row: the mean test perplexity of each over the "
      "seeds both ran, and seed by seed ppl(tied) / ppl(untied) - 1 (mean, 95% t interval):\n\n"
      "| model | seeds | untied | tied | tying's effect |\n|---|---:|---:|---:|---:|\n" +
      models + "\n";
  if (tie.by_width.seeds >= 2)
    out += "Does it change with the width? " + width_sentence(tie.by_width) + "\n\n";
  // Whether tying's cost on tokens never seen in training (section 1's band table) outlives
  // the decay policy.
  return out + band_difference_table(tie.files, kUntiedNoDecay,
                                     "By how often the target occurs in the training split");
}
namespace {

// Each share's cap on epochs and early-stopping patience as its runs were configured: "5%: at
// most 240 epochs, patience 40; 25%: ...". Empty when no run file says.
std::string share_budgets(const RunFiles& files) {
  std::map<double, std::pair<size_t, size_t>> by_share;  // share: epochs, patience
  for (const auto& [key, by_seed] : files)
    for (const auto& [seed, run] : by_seed)
      if (run->contains("config")) {
        const train::TrainConfig c = config_of(run->at("config"));
        by_share[c.data.train_fraction] = {c.epochs, c.patience};
      }
  std::string out;
  for (const auto& [share, budget] : by_share)
    out += (out.empty() ? "" : "; ") + fixed(100 * share, 0) + "%: at most " +
           std::to_string(budget.first) + " epochs, patience " + std::to_string(budget.second);
  return out;
}

}  // namespace

// The data-size sweep at convergence (scripts/converged.sh's data-size part, in
// root/converged/data_size): its shares of the training split, and the 100% column from the
// GPT runs of section 1, which are the same runs (both kinds of pretrained rows use word2vec
// trained on the full split there).
std::string converged_data_size(const fs::path& root, const Study& sweep, const Study& gpt,
                                bool plots) {
  if (sweep.summary.is_null()) return "";
  const fs::path sub = fs::path("converged") / "data_size";
  const std::string budgets = share_budgets(sweep.files);
  json size = sweep.summary;
  if (!gpt.summary.is_null()) {
    std::map<RowKey, std::pair<const json*, const json*>> full;  // row, one of its run files
    for (const auto& row : gpt.summary.at("rows"))
      full[{row.at("model"), row.at("mode")}].first = &row;
    for (const auto& [key, by_seed] : gpt.files)
      if (!by_seed.empty()) full[key].second = by_seed.begin()->second;
    json added = json::array();
    for (const auto& [key, rows] : runs_by_row(size.at("rows"))) {
      const std::string& mode = key.second;
      const std::string source = mode.ends_with("-full") ? mode.substr(0, mode.size() - 5) : mode;
      const auto found = full.find({key.first, source});
      if (found == full.end() || !found->second.first || !found->second.second) continue;
      json row = *found->second.first;
      row["mode"] = mode, row["fraction"] = 1.0;
      row["train_tokens"] = found->second.second->at("data").at("train_tokens");
      added.push_back(row);
    }
    if (!added.empty()) {
      for (const auto& row : added) size["rows"].push_back(row);
      size["fractions"].push_back(1.0);
    }
  }
  return "## 2. How much data: where does pretraining help? (at convergence)\n\n"
         "`converged/data_size/`: the GPT of section 1 trained on the first share of the training "
         "split, with early stopping on validation as there. " +
         (budgets.empty() ? ""
                          : "Each share's cap on epochs and its patience, both in passes over "
                            "the share: " +
                                budgets + ". ") +
         "word2vec is trained on the same share, or on the full split for the -full rows. A "
         "-full row's word2vec saw 1 / share times the text its language model saw (20 times for a "
         "share of 5%): its gain is that of the extra text, and which makes better use of the same "
         "text, "
         "word2vec or a table learned end to end, is for a control that gives the end-to-end "
         "table that text too (`scripts/converged.sh --parts same-text`), not for these rows. "
         "The 100% column is section 1's runs.\n\n" +
         data_size_table(size) + "\n" + significance_rows(sweep.comparisons, "learned") +
         epochs_table(sweep.files, run_clock(sweep.files)) + "\n" +
         (plots ? data_size_plot(size, root, sub) : "");
}
}  // namespace tg::experiments::report
