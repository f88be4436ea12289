// How the report writes numbers: one place for every figure's format.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tg::experiments::report {

std::string fixed(double v, int decimals);  // "3.14"
std::string thousands(double v);            // "950", "40.0k", "1.20M"
std::string grouped(size_t n);              // 50257 -> "50,257": an exact count
std::string duration(double seconds);       // "45 s", "12.5 min", "3.5 h"
std::string p_value(double p);              // "0.004", "<0.001"
std::string signed_percent(double share);   // 0.0123 -> "+1.23%", -0.004 -> "-0.40%"
// The shortest text that reads back as the float (a configuration's learning rate is a float:
// "0.001", not the double nearest it).
std::string shortest_float(float value);

// Text read from a results file is untrusted (docs/errors.md, "What the report trusts"): it
// reaches REPORT.md and gnuplot only through these.
// The text with each control character (a line break, an escape sequence) as U+FFFD: what
// the report does to every string of a results file as it reads it (results.hpp's load).
std::string printable(std::string_view text);
// Markdown text: a backslash before every character Markdown (GitHub's included) would read as
// markup, so a name or a word shows as itself and cannot open a link, a tag or a table cell.
std::string markdown_text(std::string_view text);
// A Markdown code span showing the text as it is (a fence of more backticks than the text has
// in a row; a pipe escaped, since a table cell ends at one even inside a code span).
std::string markdown_code(std::string_view text);
// A gnuplot single-quoted string: gnuplot substitutes neither backquotes nor @macros inside
// one, and a quote inside is doubled. Each of the three shows a control character as U+FFFD.
std::string gnuplot_string(std::string_view text);

// A name a study's own file gives (a folder, an arm, an effect) becomes a path and Markdown, so
// it must be a plain name (base/enum_names.hpp), never "..", a separator or markup; a
// `nested` one may be two joined by one '/' ("converged/gpt"). Returns the name; otherwise
// throws naming the file and its key `where`.
std::string checked_name(const nlohmann::json& value, const std::filesystem::path& file,
                         const std::string& where, bool nested = false);

// A correlation recorded in a results file as "0.412", or "n/a" where it was not measured (null:
// too few word pairs known).
std::string score(const nlohmann::json& value);

// A summary row's metric as "312.4 ± 3.1" (mean ± sample standard deviation; one run:
// "312.4"); "-" if the row has no such metric.
std::string mean_spread(const nlohmann::json& row, const std::string& metric, int decimals = 1);

}  // namespace tg::experiments::report
