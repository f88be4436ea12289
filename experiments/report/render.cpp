#include "experiments/report/render.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "base/escape.hpp"
#include "base/files.hpp"
#include "experiments/report/analysis.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/plots.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Findings load_long_studies(const fs::path& dir) {
  Findings s;
  s.ngram = read_folder(dir / "ngram");
  s.paper = read_folder(dir / "paper_nplm");
  s.converged = load_converged(dir / "converged");
  s.band_reruns = load_study(dir / "converged" / "gpt_bands");
  supplement_bands(s.converged.front().study, s.band_reruns);  // kConvergedStudies starts with gpt
  s.sweep = load_study(dir / "converged" / "data_size", StudyRows::by_share);
  s.tie = fair_tie(dir / "converged", s.converged);
  s.bf16 = precision_rows(s.gpt(), load_study(dir / "converged" / "gpt_bf16"));
  s.converged_life = load_summary(dir / "converged" / "lifecycle" / "summary.json");
  s.gpt2_life = load_summary(dir / "converged" / "lifecycle_gpt2" / "summary.json");
  s.lazy = lazy_adam(s.gpt(), load_study(dir / "converged" / "gpt_lazy_adam"), s.converged_life,
                     load_summary(dir / "converged" / "lifecycle_lazy_adam" / "summary.json"));
  s.optimizers = optimizer_rows(dir / "lifecycle_optimizers");
  return s;
}

// One family for Holm's correction: every comparison the conclusions draw on (kHolmFamily
// names their sections).
void decide_family(Findings& s) {
  std::vector<Comparison*> family;
  for (ConvergedStudy& model : s.converged)
    for (Comparison& c : model.study.comparisons) family.push_back(&c);
  for (Comparison& c : s.sweep.comparisons) family.push_back(&c);
  for (Comparison& c : s.lazy.rows) family.push_back(&c);
  for (Comparison& c : s.tie.rows) family.push_back(&c);
  if (s.tie.by_width.seeds >= 2) family.push_back(&s.tie.by_width);
  decide(family);
}

// Refuses a folder that holds no study the report knows.
void check_has_results(const fs::path& dir, bool any_known_study) {
  for (const char* folder : {"converged", "paper_nplm", "lifecycle_optimizers"})
    any_known_study = any_known_study || fs::exists(dir / folder);
  if (!any_known_study)
    throw std::runtime_error(
        dir.string() +
        ": no experiment results (run scripts/reproduce.sh, an exp_* binary, or a study of your "
        "own with --out " +
        dir.string() + "/NAME first)");
}

// The whole report, section by section; the short-budget sections (1a, 1b, 2a, 3a) are rendered
// here, the long studies' in section_*.cpp.
std::string render(const std::string& results_dir, bool plots) {
  const fs::path dir(results_dir);
  const json emb = load_summary(dir / "embeddings" / "summary.json");
  const json size = load_summary(dir / "data_size" / "summary.json");
  const json life = load_summary(dir / "lifecycle" / "summary.json");
  // Without gnuplot the report still renders, but its pictures would vanish unannounced.
  if (plots && !have_gnuplot()) {
    std::fprintf(stderr,
                 "report: gnuplot not found: REPORT.md gets its tables but no plots "
                 "(scripts/setup.sh report installs gnuplot; --no-plots asks for tables only)\n");
    plots = false;
  }
  // Any folder that declares its study (study.json) renders, under any name.
  const std::string declared = declared_studies_section(dir, plots);
  const std::string scaling = scaling_section(dir, plots) + subwords_section(dir);
  check_has_results(dir, !emb.is_null() || !size.is_null() || !life.is_null() ||
                             !declared.empty() || !scaling.empty());
  Findings s = load_long_studies(dir);
  decide_family(s);
  s.calibration = calibration_of(s.ngram);
  const std::string compute_table = compute_section(dir, s.paper, s.compute);
  s.scale = scale_rows(s.ngram, s.paper, s.converged);
  const std::vector<OptimizerRows> movement = optimizer_rows(dir / "lifecycle_movement");
  std::ostringstream md;
  md << "# Embedding experiments: results\n\n"
     << "Rendered by `build/bin/report` from the JSON files in this folder; every number below "
        "comes from them.\n\n";
  md << conclusions_section(s) << calibration_section(s.ngram)
     << paper_nplm_section(s.paper, s.calibration)
     << one_scale_section(s.scale, s.calibration, unk_spelling_cost(s.ngram))
     << converged_section(dir, s.converged, plots) << fair_tie_section(s.tie)
     << precision_section(s.bf16);
  // The runs of `scripts/reproduce.sh --target` (longer training), when they sit next to the
  // full profile's results, get their own table and a line in the reference table.
  const json longer = load_summary(dir / "target" / "embeddings" / "summary.json");
  const std::string converged_size = converged_data_size(dir, s.sweep, s.gpt(), plots);
  md << short_embeddings_section(emb, dir, plots) << longer_training_section(longer)
     << reference_section(emb, longer) << converged_size
     << short_data_size_section(size, !converged_size.empty(), dir, plots)
     << converged_lifecycle_section(s.converged_life, dir, plots)
     << optimizer_rows_section(s.optimizers) << movement_section(movement)
     << lazy_adam_section(s.lazy) << gpt2_lifecycle_section(s.gpt2_life, dir, plots)
     << short_lifecycle_section(life, !s.converged_life.is_null(), dir, plots);
  md << scaling << declared << compute_table;
  const std::string text = md.str();
  base::atomic_write((dir / "REPORT.md").string(), [&](std::ostream& o) { o << text; });
  return text;
}

}  // namespace

std::string render_report(const std::string& results_dir, bool plots) {
  try {
    return render(results_dir, plots);
  } catch (const json::exception& e) {
    // A results file without a field the report reads (by hand, or from another program).
    throw std::runtime_error(results_dir + ": a results file lacks what the report needs: " +
                             base::json_error_text(e.what()));
  }
}

}  // namespace tg::experiments::report
