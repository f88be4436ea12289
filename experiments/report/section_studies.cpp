#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "base/enum_names.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The folders the report's own sections read by name (render.cpp): a study.json there does not
// make a second section.
bool rendered_by_name(const fs::path& relative) {
  static const std::set<std::string> named = {
      "embeddings", "data_size", "lifecycle", "converged",
      "paper_nplm", "target",    "ngram",     "lifecycle_optimizers",
      "quick"};
  return named.contains(relative.begin()->string());
}

// A study file's reference arm and its declared comparisons as the comparisons' keys
// (a data-size study's rows are named by model and share, "gpt 25%").
struct Declaration {
  std::string reference;
  StudyRows rows = StudyRows::by_mode;
  std::set<RowKey> family;
};

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

}  // namespace

std::string declared_studies_section(const fs::path& dir, bool plots) {
  std::vector<fs::path> folders;
  if (fs::is_directory(dir))
    for (const auto& entry : fs::recursive_directory_iterator(dir))
      if (entry.is_directory() && fs::exists(entry.path() / "study.json") &&
          !rendered_by_name(fs::relative(entry.path(), dir)))
        folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  std::string blocks;
  for (const fs::path& folder : folders) {
    const Declaration declared = declaration_of(folder / "study.json");
    Study study = load_study(folder, declared.rows, declared.reference);
    if (study.summary.is_null()) continue;
    // Only what the study declared before its runs is tested, and Holm's correction runs over
    // that family alone.
    std::erase_if(study.comparisons,
                  [&](const Comparison& c) { return !declared.family.contains(c.key); });
    std::vector<Comparison*> family;
    for (Comparison& c : study.comparisons) family.push_back(&c);
    decide(family, declared.family.size());
    const size_t m = declared.family.size();
    const std::string family_name =
        "this study's family (the " + std::to_string(m) +
        (m == 1 ? " comparison" : " comparisons") + " its study.json declared before its runs" +
        (family.size() < m ? ", " + std::to_string(family.size()) + " of them with runs so far"
                           : "") +
        ")";
    blocks +=
        study_block(dir, fs::relative(folder, dir), study, declared.reference, family_name, plots);
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
