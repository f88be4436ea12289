// The report: REPORT.md (and gnuplot plots) rendered from the JSON files the experiment programs
// wrote. A pure function of those files, so it can be rebuilt at any time without training.
#pragma once

#include <string>

namespace tg::experiments::report {

// Reads the studies under results_dir (those present), writes results_dir/REPORT.md and, if
// gnuplot is installed and `plots`, PNG plots beside their runs. Returns the report.
std::string render_report(const std::string& results_dir, bool plots);

}  // namespace tg::experiments::report
