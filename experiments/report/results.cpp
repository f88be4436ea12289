#include "experiments/report/results.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "base/enum_names.hpp"
#include "base/escape.hpp"
#include "experiments/lifecycle_probe.hpp"
#include "experiments/report/format.hpp"
#include "experiments/test_losses.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A results file is untrusted input (docs/errors.md, "What the report trusts"). A control
// character (a line break, an escape sequence) in any of its strings is replaced by U+FFFD, so
// no string read from a file can end a line of REPORT.md or of a gnuplot script, or drive the
// terminal a message is printed on; the names the tables and plots are keyed by (models and
// modes) must be plain names, or the file is refused. Other text is escaped where it is shown.
void check_strings(json& value, const fs::path& p, const std::string& key = "") {
  if (value.is_string()) {
    value = printable(value.get<std::string>());
    if ((key == "model" || key == "mode") && !base::plain_name(value.get<std::string>()))
      throw std::runtime_error(p.string() + ": \"" + key + "\" is " + value.dump() +
                               ", not a name (" + base::kPlainNameRule + ")");
  } else if (value.is_array()) {
    for (json& item : value) check_strings(item, p, key);
  } else if (value.is_object()) {
    json clean = json::object();
    for (auto& [name, item] : value.items()) {
      check_strings(item, p, name);
      clean[printable(name)] = std::move(item);
    }
    value = std::move(clean);
  }
}

}  // namespace

json load(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return nullptr;
  json file;
  try {
    file = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(p.string() + ": not valid JSON: " + base::json_error_text(e.what()));
  }
  check_strings(file, p);
  return file;
}

namespace {

bool is_number(const json& v) {
  return v.is_number() || v.is_null();  // null: how JSON writes a NaN
}

bool is_list_of_objects(const json& v) {
  return v.is_array() && std::ranges::all_of(v, [](const json& e) { return e.is_object(); });
}

// What a field of a run holds, where a run file or a summary's entry has it: its name in an
// error, the test, and the fields of that kind.
struct FieldKind {
  const char* name;
  bool (*holds)(const json&);
  std::vector<const char*> keys;
};

const std::vector<FieldKind>& run_field_kinds() {
  static const std::vector<FieldKind> kinds = {
      {"a number",
       is_number,
       {"valid_ppl", "test_ppl", "train_ppl", "test_ppl_per_word", "valid_ppl_per_word", "seed",
        "best_epoch", "steps", "steps_per_epoch", "tokens_per_step", "wall_s", "train_seconds",
        "cpu_s", "trainable_params", "total_params", "train_tokens_per_s", "fraction",
        "train_tokens"}},
      {"true or false", [](const json& v) { return v.is_boolean(); }, {"stopped_early"}},
      {"a string",
       [](const json& v) { return v.is_string(); },
       {"model", "mode", "file", "commit"}},
      {"an object",
       [](const json& v) { return v.is_object(); },
       {"config", "test_blocks", "provenance"}},
      {"a list of objects", is_list_of_objects, {"epochs", "evals"}},
  };
  return kinds;
}
constexpr const char* kEpochNumbers[] = {"epoch", "step", "valid_ppl", "valid_loss", "train_loss"};

}  // namespace

train::RunRecord run_record(const json& file, const fs::path& p) {
  try {
    train::RunRecord record = train::RunRecord::from_json(file, p.string());
    (void)TestLosses::of_run(file, p.string());  // a study's own fields, among the record's extra
    return record;
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
}

std::string commit_of(const json& run) {
  const json p = run.value("provenance", json::object());
  if (!p.is_object()) return "";
  return p.value("commit", std::string()) + (p.value("dirty", false) ? "-dirty" : "");
}

namespace {

// The fields of an entry of a summary's "runs" (or of a file that is no run file), each of the
// kind the report reads it as; `where` names the field's place ("" or "runs[3].").
void check_run_fields(const json& run, const std::string& where,
                      const std::function<std::runtime_error(const std::string&)>& bad) {
  for (const FieldKind& kind : run_field_kinds())
    for (const char* key : kind.keys)
      if (run.contains(key) && !kind.holds(run.at(key)))
        throw bad("\"" + where + key + "\" is " + run.at(key).dump().substr(0, 60) + ", not " +
                  kind.name);
  // A life cycle's census of the table, read as the probe wrote it (lifecycle_probe.hpp).
  try {
    (void)TableCensus::of_run(run, "");
  } catch (const std::invalid_argument& e) {
    throw bad("\"" + where + "table\": " + e.what());
  }
  for (const char* list : {"epochs", "evals"}) {
    if (!run.contains(list)) continue;
    for (size_t i = 0; i < run.at(list).size(); ++i)
      for (const char* key : kEpochNumbers)
        if (run.at(list)[i].contains(key) && !is_number(run.at(list)[i].at(key)))
          throw bad("\"" + where + list + "[" + std::to_string(i) + "]." + key + "\" is " +
                    run.at(list)[i].at(key).dump().substr(0, 60) + ", not a number");
  }
}

// A file's errors of shape, named by file and field, before the sections read it: a file edited
// by hand or written by another program otherwise fails deep inside a section, unnamed. A run
// file is checked as the typed record reads it (train/run_record.hpp).
void check_shape(const json& file, const fs::path& p) {
  const auto bad = [&](const std::string& what) {
    return std::runtime_error(p.string() + ": " + what);
  };
  if (!file.is_object()) throw bad("not a JSON object");
  if (train::RunRecord::is_run_file(file)) {
    (void)run_record(file, p);
    return;
  }
  for (const char* key : {"runs", "rows"})
    if (file.contains(key) && !is_list_of_objects(file.at(key)))
      throw bad("\"" + std::string(key) + "\" is " + file.at(key).dump().substr(0, 60) +
                ", not a list of objects");
  check_run_fields(file, "", bad);
  if (file.contains("runs"))
    for (size_t i = 0; i < file.at("runs").size(); ++i)
      check_run_fields(file.at("runs")[i], "runs[" + std::to_string(i) + "].", bad);
}

}  // namespace

json load_summary(const fs::path& p, const FolderFiles* files) {
  json summary = load(p);
  if (summary.is_null()) return nullptr;
  check_shape(summary, p);
  if (summary.value("runs", json::array()).empty()) return nullptr;
  check_summary(summary, p, files);
  return summary;
}

namespace {

bool same_number(const json& a, const json& b) {
  if (!a.is_number() || !b.is_number()) return a == b;
  const double x = a.get<double>(), y = b.get<double>();
  return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
}

}  // namespace

void check_summary(const json& summary, const fs::path& p, const FolderFiles* files) {
  const auto disagree = [&](const std::string& what) {
    return std::runtime_error(p.string() + " disagrees with its run files: " + what +
                              " (a study invoked again rewrites its summary from them)");
  };
  const json& runs = summary.at("runs");
  for (const json& entry : runs) {
    if (!entry.is_object() || !entry.contains("file")) continue;
    const std::string name = fs::path(entry.at("file").get<std::string>()).filename().string();
    const json read_here = files ? json() : load(p.parent_path() / name);
    const json& file = files ? file_in(*files, name) : read_here;
    if (file.is_null()) continue;  // a run file not committed: the summary is all there is
    if (!files) check_shape(file, p.parent_path() / name);  // read_folder checked its own
    for (const char* key : {"valid_ppl", "test_ppl"})
      if (entry.contains(key) && !same_number(entry.at(key), file.value(key, json())))
        throw disagree(std::string(key) + " of " + name + " is " + entry.at(key).dump() +
                       " there, " + file.value(key, json()).dump() + " in the file");
  }
  if (!summary.contains("rows")) return;
  size_t listed = 0;
  for (const json& row : summary.at("rows")) {
    const json count = row.value("runs", json());
    if (!count.is_number_unsigned() || count.get<size_t>() == 0)
      throw disagree("a row's run count is " + count.dump() + ", not a whole number of runs");
    std::vector<double> test;
    size_t matching = 0;
    for (const json& entry : runs) {
      bool same = true;
      for (const auto& [key, value] : row.items())
        if (!value.is_object() && key != "runs" && !(entry.contains(key) && entry.at(key) == value))
          same = false;
      if (!same) continue;
      ++matching;
      if (entry.value("test_ppl", json()).is_number()) test.push_back(entry.at("test_ppl"));
    }
    const std::string name =
        row.value("model", json("?")).dump() + " " + row.value("mode", json("?")).dump();
    if (matching != count.get<size_t>())
      throw disagree("row " + name + " counts " + count.dump() + " runs, the summary lists " +
                     std::to_string(matching));
    if (row.contains("test_ppl") && !test.empty()) {
      double mean = 0;
      for (double v : test) mean += v / static_cast<double>(test.size());
      if (!same_number(row.at("test_ppl").value("mean", json()), mean))
        throw disagree("row " + name + " has mean test ppl " +
                       row.at("test_ppl").value("mean", json()).dump() + ", its runs " +
                       fixed(mean, 4));
    }
    listed += matching;
  }
  if (listed != runs.size())
    throw disagree("its rows count " + std::to_string(listed) + " runs, it lists " +
                   std::to_string(runs.size()));
}

Rows runs_by_row(const json& runs) {
  Rows rows;
  for (const auto& run : runs) {
    const RowKey key{run.at("model").get<std::string>(), run.at("mode").get<std::string>()};
    auto row =
        std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == key; });
    if (row == rows.end()) row = rows.insert(rows.end(), {key, {}});
    row->second.push_back(run);
  }
  return rows;
}

FolderFiles read_folder(const fs::path& folder) {
  FolderFiles files;
  if (!fs::is_directory(folder)) return files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && entry.path().extension() == ".json" && name != "summary.json") {
      json file = load(entry.path());
      // A run file read (and so checked) once, as this schema writes it, whatever schema wrote
      // it; any other file checked for its shape.
      if (train::RunRecord::is_run_file(file))
        file = run_record(file, entry.path()).to_json();
      else
        check_shape(file, entry.path());
      files.emplace(name, std::move(file));
    }
  }
  return files;
}

const json& file_in(const FolderFiles& folder, const std::string& name) {
  static const json none;
  const auto found = folder.find(name);
  return found == folder.end() ? none : found->second;
}

RunFiles load_run_files(const Rows& rows, const FolderFiles& folder) {
  RunFiles files;
  for (const auto& [key, row] : rows) {
    std::map<size_t, const json*> by_seed;
    for (const auto& r : row) {
      if (!r.contains("file")) continue;
      const auto file = folder.find(fs::path(r.at("file").get<std::string>()).filename().string());
      if (file != folder.end()) by_seed[r.at("seed").get<size_t>()] = &file->second;
    }
    files.emplace_back(key, std::move(by_seed));
  }
  return files;
}

RunFiles files_by_share(const json& summary, const FolderFiles& folder) {
  json by_share = json::array();
  for (json r : summary.at("runs")) {
    r["model"] = r.at("model").get<std::string>() + " " +
                 fixed(100 * r.at("fraction").get<double>(), 0) + "%";
    by_share.push_back(r);
  }
  return load_run_files(runs_by_row(by_share), folder);
}

json first_run_config(const RunFiles& files) {
  for (const auto& [key, by_seed] : files)
    for (const auto& [seed, run] : by_seed)
      if (run->contains("config")) return run->at("config");
  return json();
}

train::TrainConfig config_of(const json& config) {
  try {
    return train::TrainConfig::from_json(config);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("a configuration the report cannot read: ") + e.what());
  }
}

double training_seconds(const json& run) {
  return run.value("train_seconds", run.value("wall_s", 0.0));
}

RunClock run_clock(const RunFiles& files) {
  size_t runs = 0;
  for (const auto& [key, by_seed] : files)
    for (const auto& [seed, run] : by_seed) {
      if (!run->contains("cpu_s") || !run->at("cpu_s").is_number()) return RunClock::training;
      ++runs;
    }
  return runs > 0 ? RunClock::cpu : RunClock::training;
}

double run_seconds(const json& run, RunClock clock) {
  return clock == RunClock::cpu ? run.at("cpu_s").get<double>() : training_seconds(run);
}

}  // namespace tg::experiments::report
