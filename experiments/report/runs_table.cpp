#include "experiments/report/runs_table.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "base/files.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/results.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kColumns =
    "study,model,mode,d_model,layers,train_fraction,optimizer,lr,precision,seed,test_ppl,valid_ppl,"
    "test_ppl_per_word,valid_ppl_per_word,best_epoch,stopped_early,cpu_s,commit";

// A text cell: quoted, quotes doubled; one a spreadsheet would evaluate (= + - @, a tab or a
// carriage return first) gets a leading ' (a results folder is untrusted input).
std::string text_cell(const std::string& text) {
  std::string out = "\"";
  if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos)
    out += '\'';
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A number, a boolean or nothing, as the file has it under `key`.
std::string value_cell(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) return "";
  const json& v = object.at(key);
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    std::ostringstream out;
    out.precision(17);
    out << v.get<double>();
    return out.str();
  }
  return "";
}

void add_rows(const fs::path& folder, const std::string& study, std::ostream& out) {
  const FolderFiles files = read_folder(folder);  // each run file read and checked once
  const json summary = load_summary(folder / "summary.json", &files);
  if (summary.is_null()) return;
  for (const json& entry : summary.at("runs")) {
    if (!entry.contains("file") || !entry.at("file").is_string()) continue;
    const std::string name = fs::path(entry.at("file").get<std::string>()).filename().string();
    const fs::path file = folder / name;
    const json& run = file_in(files, name);
    if (!train::RunRecord::is_run_file(run)) continue;  // not committed, or no run
    train::TrainConfig c;
    try {
      c = config_of(run.at("config"));
    } catch (const std::exception& e) {
      throw std::runtime_error(file.string() + ": " + e.what());
    }
    out << text_cell(study) << ',' << text_cell(entry.value("model", c.model.name)) << ','
        << text_cell(entry.value("mode", std::string())) << ',' << c.model.d_model << ','
        << c.model.layers << ',' << c.data.train_fraction << ',' << text_cell(c.optimizer) << ','
        << shortest_float(c.lr) << ',' << text_cell(base::name_of(kPrecisionNames, c.precision))
        << ',' << value_cell(run, "seed") << ',' << value_cell(run, "test_ppl") << ','
        << value_cell(run, "valid_ppl") << ',' << value_cell(run, "test_ppl_per_word") << ','
        << value_cell(run, "valid_ppl_per_word") << ',' << value_cell(run, "best_epoch") << ','
        << value_cell(run, "stopped_early") << ',' << value_cell(run, "cpu_s") << ','
        << text_cell(commit_of(run)) << "\n";
  }
}

}  // namespace

std::string runs_csv(const std::string& results_dir) {
  const fs::path root(results_dir);
  if (!fs::is_directory(root)) throw std::runtime_error(results_dir + ": not a folder");
  std::vector<fs::path> folders = base::folders_inside(root);  // no link followed, as the report
  folders.insert(folders.begin(), root);
  std::ostringstream out;
  out << kColumns << "\n";
  for (const fs::path& folder : folders)
    if (fs::exists(folder / "summary.json"))
      add_rows(folder, fs::relative(folder, root).generic_string(), out);
  return out.str();
}

}  // namespace tg::experiments::report
