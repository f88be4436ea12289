// Markdown (and gnuplot) rendering of experiment results. Pure functions of the JSON files,
// so the report can be rebuilt at any time without training anything.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tg::experiments {

std::string embeddings_table(const nlohmann::json& summary);   // exp_embeddings' summary.json
std::string data_size_table(const nlohmann::json& summary);    // exp_data_size's summary.json
std::string lifecycle_section(const nlohmann::json& summary);  // exp_lifecycle's summary.json
std::string bengio_reference_table(const nlohmann::json* embeddings,
                                   const nlohmann::json* longer = nullptr);

// "312.4 ± 3.1" (one run: "312.4"); "-" if absent.
std::string mean_spread(const nlohmann::json& row, const std::string& metric, int decimals = 1);

// Reads <results>/{embeddings,data_size,lifecycle}/summary.json (those present), writes
// <results>/REPORT.md and, if gnuplot is installed, PNG plots beside it. Returns the report.
std::string render_report(const std::string& results_dir, bool plots);

}  // namespace tg::experiments
