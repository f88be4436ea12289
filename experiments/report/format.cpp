#include "experiments/report/format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <stdexcept>

#include "base/enum_names.hpp"

namespace tg::experiments::report {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string signed_percent(double share) {
  return (share > 0 ? "+" : "") + fixed(100 * share, 2) + "%";
}

std::string shortest_float(float value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

std::string thousands(double v) {
  if (v >= 1e6) return fixed(v / 1e6, 2) + "M";
  if (v >= 1e3) return fixed(v / 1e3, 1) + "k";
  return fixed(v, 0);
}

std::string grouped(size_t n) {
  std::string digits = std::to_string(n);
  for (size_t at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, ",");
  return digits;
}

std::string duration(double s) {
  if (s >= 2 * 3600) return fixed(s / 3600, 1) + " h";
  return s >= 90 ? fixed(s / 60, 1) + " min" : fixed(s, 0) + " s";
}

std::string p_value(double p) {
  return p < 0.001 ? "<0.001" : fixed(p, 3);
}

namespace {

// A control character (a line break ends a table row or a gnuplot command; an escape sequence
// drives a terminal) as U+FFFD, anything else as it is.
std::string shown(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? "\xEF\xBF\xBD" : std::string(1, c);
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) out += shown(c);
  return out;
}

std::string markdown_text(std::string_view text) {
  // Emphasis, code, links and images, HTML and entities, headings, table cells, strikethrough
  // and GitHub's math; a backslash before any of them is CommonMark's escape.
  constexpr std::string_view markup = "\\`*_{}[]<>#|~&$";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (markup.find(c) != std::string_view::npos) out += '\\';
    out += shown(c);
  }
  return out;
}

std::string markdown_code(std::string_view text) {
  size_t longest = 0, run = 0;
  std::string body;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    body += c == '|' ? std::string("\\|") : shown(c);
  }
  const std::string fence(longest + 1, '`');
  // A space inside the fence when the text starts or ends with a backtick (CommonMark strips one).
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string gnuplot_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? "''" : shown(c);
  return out + "'";
}

std::string score(const nlohmann::json& value) {
  return value.is_number() ? fixed(value.get<double>(), 3) : "n/a";
}

std::string mean_spread(const nlohmann::json& row, const std::string& metric, int decimals) {
  if (!row.contains(metric)) return "-";
  const nlohmann::json& m = row.at(metric);
  std::string s = fixed(m.at("mean").get<double>(), decimals);
  if (m.at("n").get<size_t>() > 1) s += " ± " + fixed(m.at("std").get<double>(), decimals);
  return s;
}

std::string checked_name(const nlohmann::json& value, const std::filesystem::path& file,
                         const std::string& where, bool nested) {
  const std::string name = value.is_string() ? value.get<std::string>() : value.dump();
  const size_t slash = nested ? name.find('/') : std::string::npos;
  if (!base::plain_name(name.substr(0, slash)) ||
      (slash != std::string::npos && !base::plain_name(name.substr(slash + 1))))
    throw std::runtime_error(file.string() + ": '" + printable(name) + "' in '" + where +
                             "' is not a name (" + base::kPlainNameRule + ")");
  return name;
}

}  // namespace tg::experiments::report
