#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "base/enum_names.hpp"
#include "base/files.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The folders the report's own sections read by name (render.cpp): a study.json there does not
// make a second section. embeddings_gpt/ and embeddings_nplm/ are embeddings/ in two parts
// (scripts/reproduce.sh trains each model apart and merges them).
bool rendered_by_name(const fs::path& relative) {
  static const std::set<std::string> named = {
      "embeddings", "embeddings_gpt", "embeddings_nplm",     "data_size",
      "lifecycle",  "converged",      "paper_nplm",          "target",
      "ngram",      "quick",          "lifecycle_optimizers"};
  auto part = relative.begin();
  if (named.contains(part->string())) return true;
  // scaling/lr/, subwords/lr/: a learning-rate search, one table of its study's section.
  const std::string study = part->string();
  return (study == "scaling" || study == "subwords") && ++part != relative.end() &&
         part->string() == "lr";
}

}  // namespace

std::string declared_studies_section(const fs::path& dir, bool plots) {
  std::vector<fs::path> folders;
  if (fs::is_directory(dir))
    // A folder behind a link is passed over: its plots would be drawn at the link's target,
    // outside `dir`.
    for (const fs::path& folder : base::folders_inside(dir))
      if (fs::exists(folder / "study.json") && !rendered_by_name(fs::relative(folder, dir)))
        folders.push_back(folder);
  std::string blocks;
  for (const fs::path& folder : folders) {
    // Only what the study declared before its runs is tested (load_study reads its
    // study.json), and Holm's correction runs over that family alone.
    Study study = load_study(folder);
    if (study.summary.is_null()) continue;
    std::vector<Comparison*> family;
    for (Comparison& c : study.comparisons) family.push_back(&c);
    const size_t m = study.declared->size();
    decide(family, m);
    const std::string family_name =
        "this study's family (the " + std::to_string(m) +
        (m == 1 ? " comparison" : " comparisons") + " its study.json declared before its runs" +
        (family.size() < m ? ", " + std::to_string(family.size()) + " of them with runs so far"
                           : "") +
        ")";
    blocks +=
        study_block(dir, fs::relative(folder, dir), study, study.reference, family_name, plots);
    if (!study.comparisons.empty())
      blocks += "Verdicts, Holm over " + family_name + ":\n\n" +
                verdict_lines(study.comparisons, true) + "\n";
  }
  if (blocks.empty()) return "";
  return "## Studies that describe themselves\n\n"
         "Every other folder with a `study.json`: the file an experiment program writes before "
         "its first run, naming the study's axes, its reference arm and the comparisons it "
         "will test. Each study's verdicts are corrected over its own declared family.\n\n" +
         blocks;
}

}  // namespace tg::experiments::report
