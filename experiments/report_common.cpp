#include "experiments/report_common.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace tg::experiments::detail {

using nlohmann::json;
namespace fs = std::filesystem;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string thousands(double v) {
  if (v >= 1e6) return fixed(v / 1e6, 2) + "M";
  if (v >= 1e3) return fixed(v / 1e3, 1) + "k";
  return fixed(v, 0);
}

std::string duration(double s) {
  if (s >= 2 * 3600) return fixed(s / 3600, 1) + " h";
  return s >= 90 ? fixed(s / 60, 1) + " min" : fixed(s, 0) + " s";
}

json load(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return nullptr;
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(p.string() + ": not valid JSON: " + e.what());
  }
}

json load_summary(const fs::path& p) {
  json summary = load(p);
  if (summary.is_null() || summary.value("runs", json::array()).empty()) return nullptr;
  return summary;
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
    if (entry.is_regular_file() && entry.path().extension() == ".json" && name != "summary.json")
      files.emplace(name, load(entry.path()));
  }
  return files;
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

double training_seconds(const json& run) {
  return run.value("train_seconds", run.value("wall_s", 0.0));
}

}  // namespace tg::experiments::detail
