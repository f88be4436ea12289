#include "experiments/report/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "apps/ngram_config.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/paper.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The seeds at which a paired t-test of this mean difference and spread would have p below
// alpha; 0 when not estimable or beyond 1,000.
size_t seeds_to_decide(const experiments::Spread& s, double alpha) {
  if (s.n < 2 || !(s.sd > 0) || s.mean == 0) return 0;
  for (size_t n = 2; n <= 1000; ++n)
    if (experiments::student_t_critical(alpha, static_cast<double>(n - 1)) * s.sd /
            std::sqrt(static_cast<double>(n)) <
        std::fabs(s.mean))
      return n;
  return 0;
}

}  // namespace

std::vector<Comparison> compare_rows(const RunFiles& files, const std::string& reference) {
  // The runs that carry their test loss in blocks, by (model, mode) and seed.
  std::map<RowKey, std::map<size_t, const json*>> runs;
  std::vector<RowKey> order;
  for (const auto& [key, by_seed] : files)
    for (const auto& [seed, run] : by_seed) {
      if (!run->contains("test_blocks")) continue;
      if (!runs.count(key)) order.push_back(key);
      runs[key][seed] = run;
    }
  std::vector<Comparison> out;
  for (const auto& key : order) {
    const auto ref_row = runs.find({key.first, reference});
    if (key.second == reference || ref_row == runs.end()) continue;
    // Paired by seed: only the seeds both rows ran.
    std::vector<double> differences;
    for (const auto& [seed, run] : runs.at(key)) {
      const auto other = ref_row->second.find(seed);
      if (other == ref_row->second.end()) continue;
      differences.push_back(run->at("test_ppl").get<double>() -
                            other->second->at("test_ppl").get<double>());
    }
    if (differences.empty()) continue;
    Comparison c;
    c.key = key;
    c.seeds = differences.size();
    c.per_seed = experiments::spread_of(differences);
    c.test = experiments::paired_t_test(differences);
    c.interval = experiments::t_interval(differences);
    out.push_back(c);
  }
  return out;
}

void decide(const std::vector<Comparison*>& family, size_t declared) {
  std::vector<Comparison*> tested;
  std::vector<double> p;
  for (Comparison* c : family) {
    c->verdict = Verdict::one_seed;
    c->holm_p = 1;
    if (c->seeds < 2) continue;
    tested.push_back(c);
    p.push_back(c->test.p);
  }
  // A declared comparison without its runs yet counts as p = 1: Holm's correction is over the
  // family declared, not the part of it run so far.
  if (p.size() < declared) p.resize(declared, 1.0);
  const std::vector<double> adjusted = experiments::holm_adjust(p);
  for (size_t i = 0; i < tested.size(); ++i) {
    Comparison& c = *tested[i];
    c.holm_p = adjusted[i];
    c.verdict = c.holm_p >= kAlpha    ? Verdict::not_decided
                : c.per_seed.mean < 0 ? Verdict::better
                                      : Verdict::worse;
    // Holm's adjusted p never exceeds Bonferroni's (m p), so p below kAlpha / m decides.
    c.seeds_to_decide = c.verdict == Verdict::not_decided
                            ? seeds_to_decide(c.per_seed, kAlpha / static_cast<double>(p.size()))
                            : 0;
  }
}

EpochCap epoch_cap(const Study& study) {
  EpochCap cap;
  if (study.summary.is_null()) return cap;
  cap.epochs = config_of(study.summary.at("base_config")).epochs;
  for (const auto& [key, by_seed] : study.files)
    for (const auto& [seed, run] : by_seed) {
      ++cap.runs;
      cap.capped += run->contains("stopped_early") && !run->at("stopped_early").get<bool>();
    }
  return cap;
}

Declaration declaration_of(const fs::path& file) {
  const json study = load(file);
  const auto bad = [&](const std::string& what) {
    return std::runtime_error(file.string() + ": " + what);
  };
  if (!study.is_object() || study.value("schema", 0) != 1)
    throw bad("not a study file of this version (\"schema\": 1)");
  Declaration d;
  const json reference = study.value("reference", json());
  if (!reference.is_string() || !base::plain_name(reference.get<std::string>()))
    throw bad("\"reference\" is " + reference.dump() + ", not a mode's name");
  d.reference = reference.get<std::string>();
  if (study.value("program", "") == "data_size") d.rows = StudyRows::by_share;
  const json family = study.value("family", json());
  if (!family.is_array()) throw bad("\"family\" is not a list of comparisons");
  for (const json& c : family) {
    if (!c.is_object() || !c.contains("mode") || !c.contains("group") ||
        !c.at("group").is_object() || !c.at("group").contains("model"))
      throw bad("a comparison of \"family\" lacks its mode or its group's model");
    std::string model = c.at("group").at("model").get<std::string>();
    if (c.at("group").contains("fraction"))
      model += " " + fixed(100 * c.at("group").at("fraction").get<double>(), 0) + "%";
    d.family.insert({model, c.at("mode").get<std::string>()});
  }
  return d;
}

namespace {

// Each row against the study's reference, only the declared ones where it declared some.
void compare(Study& study) {
  study.comparisons = compare_rows(study.files, study.reference);
  if (study.declared)
    std::erase_if(study.comparisons,
                  [&](const Comparison& c) { return !study.declared->contains(c.key); });
}

}  // namespace

Study load_study(const fs::path& folder, StudyRows rows, const std::string& reference) {
  Study study;
  study.all = read_folder(folder);  // for the Compute section even before a run has finished
  study.summary = load_summary(folder / "summary.json", &study.all);
  if (study.summary.is_null()) return study;
  study.reference = reference;
  if (fs::exists(folder / "study.json")) {
    Declaration d = declaration_of(folder / "study.json");
    study.reference = d.reference;
    study.declared = std::move(d.family);
    rows = d.rows;
  }
  study.files = rows == StudyRows::by_share
                    ? files_by_share(study.summary, study.all)
                    : load_run_files(runs_by_row(study.summary.at("runs")), study.all);
  compare(study);
  return study;
}

void supplement_bands(Study& study, const Study& reruns) {
  if (study.summary.is_null() || reruns.summary.is_null()) return;
  for (auto& [key, by_seed] : study.files) {
    const auto rerun_row =
        std::ranges::find(reruns.files, key, [](const auto& r) { return r.first; });
    if (rerun_row == reruns.files.end()) continue;
    for (auto& [seed, run] : by_seed) {
      const auto rerun = rerun_row->second.find(seed);
      if (run->contains("test_bands") || rerun == rerun_row->second.end() ||
          !rerun->second->contains("test_bands"))
        continue;
      const double original = run->at("test_ppl").get<double>();
      const double difference = std::abs(rerun->second->at("test_ppl").get<double>() - original);
      if (difference == 0) {
        run = rerun->second;
        ++study.reruns_used;
      } else if (difference < kRerunTolerance * original) {
        json joined = *run;
        joined["test_bands"] = rerun->second->at("test_bands");
        run = &study.joined.emplace_back(std::move(joined));
        ++study.reruns_rounding;
        study.reruns_largest_difference =
            std::max(study.reruns_largest_difference, difference / original);
      } else {
        ++study.reruns_differing;
      }
    }
  }
  // A joined copy keeps the original's test numbers: only files replaced whole change them.
  if (study.reruns_used > 0) compare(study);
}

std::vector<ConvergedStudy> load_converged(const fs::path& converged_dir) {
  std::vector<ConvergedStudy> studies;
  for (const auto& [folder, model, reads] : kConvergedStudies) {
    const std::string label = *reads ? std::string(model) + " in " + reads : model;
    studies.push_back({folder, reads, label, load_study(converged_dir / folder)});
  }
  return studies;
}

const Study& study_of(const std::vector<ConvergedStudy>& studies, const std::string& folder) {
  static const Study none;
  const auto found = std::ranges::find(studies, folder, &ConvergedStudy::folder);
  return found == studies.end() ? none : found->study;
}

Calibration calibration_of(const FolderFiles& ngram) {
  Calibration c;
  for (const PaperNgram& p : kPaperNgrams) {
    const apps::NgramConfig model{p.smoothing, p.order};
    const std::string name = model.name();
    const json& run = file_in(ngram, model.file_name());
    // The paper's n-grams read words: a subword n-gram calibrates nothing.
    if (run.is_null() || run.contains("tokenizer")) continue;
    const double ratio = run.at("test_ppl").get<double>() / p.test;
    c.ratios.emplace_back(name, ratio);
    c.low = c.ratios.size() == 1 ? ratio : std::min(c.low, ratio);
    c.high = c.ratios.size() == 1 ? ratio : std::max(c.high, ratio);
  }
  return c;
}

Agreement agreement(std::pair<double, double> range, double tolerance) {
  const auto inside = [&](double v) { return std::fabs(v - 1) <= tolerance; };
  if (inside(range.first) && inside(range.second)) return Agreement::within;
  // Both ends outside, on the same side of 1 (a range across the whole band straddles it).
  const bool below = range.second<1 - tolerance, above = range.first> 1 + tolerance;
  return below || above ? Agreement::outside : Agreement::straddles;
}

double LineFit::band_half_width(double x) const {
  if (n < 3 || sxx <= 0) return 0;
  const double d = x - x_mean;
  return t_critical * residual_sd * std::sqrt(1.0 / static_cast<double>(n) + d * d / sxx);
}

LineFit fit_line(std::span<const double> x, std::span<const double> y, double alpha) {
  LineFit f;
  f.n = std::min(x.size(), y.size());
  if (f.n == 0) return f;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < f.n; ++i) sx += x[i], sy += y[i];
  const double nd = static_cast<double>(f.n);
  f.x_mean = sx / nd;
  const double y_mean = sy / nd;
  double sxy = 0;
  for (size_t i = 0; i < f.n; ++i) {
    f.sxx += (x[i] - f.x_mean) * (x[i] - f.x_mean);
    sxy += (x[i] - f.x_mean) * (y[i] - y_mean);
  }
  f.slope = f.sxx > 0 ? sxy / f.sxx : 0;
  f.intercept = y_mean - f.slope * f.x_mean;
  f.slope_low = f.slope_high = f.slope;
  if (f.n < 3 || f.sxx <= 0) return f;
  double sse = 0;
  for (size_t i = 0; i < f.n; ++i) sse += std::pow(y[i] - f.at(x[i]), 2);
  const double df = nd - 2;
  f.residual_sd = std::sqrt(sse / df);
  f.t_critical = experiments::student_t_critical(alpha, df);
  const double se = f.residual_sd / std::sqrt(f.sxx);
  f.slope_low = f.slope - f.t_critical * se;
  f.slope_high = f.slope + f.t_critical * se;
  f.p = se > 0 ? experiments::student_t_two_sided_p(f.slope / se, df) : (f.slope != 0 ? 0.0 : 1.0);
  return f;
}

}  // namespace tg::experiments::report
