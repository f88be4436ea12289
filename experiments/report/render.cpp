#include "experiments/report/render.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

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

// The whole report, section by section; the short-budget sections (1a, 1b, 2a, 3a) are rendered
// here, the long studies' in section_*.cpp.
std::string render(const std::string& results_dir, bool plots) {
  const fs::path dir(results_dir);
  const json emb = load_summary(dir / "embeddings" / "summary.json");
  const json size = load_summary(dir / "data_size" / "summary.json");
  const json life = load_summary(dir / "lifecycle" / "summary.json");
  const json converged_life = load_summary(dir / "converged" / "lifecycle" / "summary.json");
  // Without gnuplot the report still renders, but its pictures would vanish unannounced.
  if (plots && !have_gnuplot()) {
    std::fprintf(stderr,
                 "report: gnuplot not found: REPORT.md gets its tables but no plots "
                 "(scripts/setup.sh report installs gnuplot; --no-plots asks for tables only)\n");
    plots = false;
  }
  // Any folder that declares its study (study.json) renders, under any name.
  const std::string declared = declared_studies_section(dir, plots);
  const std::string scaling = scaling_section(dir, plots);
  if (emb.is_null() && size.is_null() && life.is_null() && !fs::exists(dir / "converged") &&
      !fs::exists(dir / "paper_nplm") && !fs::exists(dir / "lifecycle_optimizers") &&
      declared.empty() && scaling.empty())
    throw std::runtime_error(
        results_dir +
        ": no experiment results (run scripts/reproduce.sh, an exp_* binary, or a study of your "
        "own with --out " +
        results_dir + "/NAME first)");
  std::ostringstream md;
  md << "# Embedding experiments: results\n\n"
     << "Rendered by `build/bin/report` from the JSON files in this folder; every number below "
        "comes from them.\n\n";
  // The long studies, each folder read (and compared) once for its sections and the conclusions.
  const FolderFiles ngram = read_folder(dir / "ngram"), paper = read_folder(dir / "paper_nplm");
  const Calibration calibration = calibration_of(ngram);
  std::vector<ConvergedStudy> converged = load_converged(dir / "converged");
  const Study band_reruns = load_study(dir / "converged" / "gpt_bands");
  supplement_bands(converged.front().study, band_reruns);  // kConvergedStudies starts with gpt
  const Study& gpt = study_of(converged, "gpt");
  Study sweep = load_study(dir / "converged" / "data_size", StudyRows::by_share);
  FairTie tie = fair_tie(dir / "converged", converged);
  const std::vector<PrecisionRow> bf16 =
      precision_rows(gpt, load_study(dir / "converged" / "gpt_bf16"));
  // One family for Holm's correction: every comparison the conclusions draw on (kHolmFamily
  // names their sections).
  std::vector<Comparison*> family;
  for (ConvergedStudy& model : converged)
    for (Comparison& c : model.study.comparisons) family.push_back(&c);
  for (Comparison& c : sweep.comparisons) family.push_back(&c);
  LazyAdam lazy =
      lazy_adam(gpt, load_study(dir / "converged" / "gpt_lazy_adam"), converged_life,
                load_summary(dir / "converged" / "lifecycle_lazy_adam" / "summary.json"));
  for (Comparison& c : lazy.rows) family.push_back(&c);
  for (Comparison& c : tie.rows) family.push_back(&c);
  if (tie.by_width.seeds >= 2) family.push_back(&tie.by_width);
  decide(family);
  Compute compute;
  const std::string compute_table = compute_section(dir, paper, compute);
  const std::vector<ScaleRow> scale = scale_rows(ngram, paper, converged);
  const std::vector<OptimizerRows> optimizers = optimizer_rows(dir / "lifecycle_optimizers");
  const std::vector<OptimizerRows> movement = optimizer_rows(dir / "lifecycle_movement");
  const json gpt2_life = load_summary(dir / "converged" / "lifecycle_gpt2" / "summary.json");
  md << conclusions_section(calibration, paper, scale, converged, sweep, tie, bf16, converged_life,
                            gpt2_life, optimizers, lazy, compute)
     << calibration_section(ngram) << paper_nplm_section(paper, calibration)
     << one_scale_section(scale, calibration, unk_spelling_cost(ngram))
     << converged_section(dir, converged, plots) << fair_tie_section(tie)
     << precision_section(bf16);
  // The runs of `scripts/reproduce.sh --target` (longer training), when they sit next to the
  // full profile's results, get their own table and a line in the reference table.
  const json longer = load_summary(dir / "target" / "embeddings" / "summary.json");
  const std::string converged_size = converged_data_size(dir, sweep, gpt, plots);
  md << short_embeddings_section(emb, dir, plots) << longer_training_section(longer)
     << reference_section(emb, longer) << converged_size
     << short_data_size_section(size, !converged_size.empty(), dir, plots)
     << converged_lifecycle_section(converged_life, dir, plots)
     << optimizer_rows_section(optimizers) << movement_section(movement) << lazy_adam_section(lazy)
     << gpt2_lifecycle_section(gpt2_life, dir, plots)
     << short_lifecycle_section(life, !converged_life.is_null(), dir, plots);
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
    throw std::runtime_error(results_dir +
                             ": a results file lacks what the report needs: " + e.what());
  }
}

}  // namespace tg::experiments::report
