// How the report writes numbers: one place for every figure's format.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tg::experiments::report {

std::string fixed(double v, int decimals);  // "3.14"
std::string thousands(double v);            // "950", "40.0k", "1.20M"
std::string grouped(size_t n);              // 50257 -> "50,257": an exact count
std::string duration(double seconds);       // "45 s", "12.5 min", "3.5 h"
std::string p_value(double p);              // "0.004", "<0.001"
std::string signed_percent(double share);   // 0.0123 -> "+1.23%", -0.004 -> "-0.40%"

// A correlation recorded in a results file as "0.412", or "n/a" where it was not measured (null:
// too few word pairs known).
std::string score(const nlohmann::json& value);

// A summary row's metric as "312.4 ± 3.1" (mean ± sample standard deviation; one run:
// "312.4"); "-" if the row has no such metric.
std::string mean_spread(const nlohmann::json& row, const std::string& metric, int decimals = 1);

}  // namespace tg::experiments::report
