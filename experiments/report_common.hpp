// What the report's parts share: number formatting, reading results files, and a study's runs
// grouped by row (report_render.cpp, report_plots.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tg::experiments::detail {

std::string fixed(double v, int decimals);  // "3.14"
std::string thousands(double v);            // "950", "40.0k", "1.20M"
std::string duration(double seconds);       // "45 s", "12.5 min", "3.5 h"

// A JSON file, or null when there is none; a file that is not valid JSON is an error naming it.
nlohmann::json load(const std::filesystem::path& p);
// A study's summary.json, or null while it lists no finished run: a study writes its summary
// before the first run ends, and an empty section says nothing.
nlohmann::json load_summary(const std::filesystem::path& p);

// A study's runs grouped by (model, mode), the groups in the order their first run appears.
using RowKey = std::pair<std::string, std::string>;
using Rows = std::vector<std::pair<RowKey, std::vector<nlohmann::json>>>;
Rows runs_by_row(const nlohmann::json& runs);

// Every JSON file of a results folder but its summary, by file name: read once for all the
// parts of the report that want them (the tables, the curves, the Compute section). No
// folder: no files.
using FolderFiles = std::map<std::string, nlohmann::json>;
FolderFiles read_folder(const std::filesystem::path& folder);

// Each run's own JSON file (the summary keeps only its headline numbers), row by row of
// runs_by_row, then by seed; runs whose file is missing are left out. The files stay in the
// folder's map: RunFiles points into it and must not outlive it.
using RunFiles = std::vector<std::pair<RowKey, std::map<size_t, const nlohmann::json*>>>;
RunFiles load_run_files(const Rows& rows, const FolderFiles& folder);

// A run's training time: train_seconds adds up the sittings of a resumed run, where an older
// run's wall_s counts the last one only (the oldest have wall_s alone).
double training_seconds(const nlohmann::json& run);

}  // namespace tg::experiments::detail
