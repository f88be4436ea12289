// Range checks for numeric flags, with messages a user reads at a glance ("--batch: must be
// a positive number, got 0") instead of CLI11's 300-digit bounds. They run on the text
// before it is converted, so "-1" never wraps around into a huge unsigned value.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

namespace tg::apps {

// The value as a finite number (a whole one when `integer`), or an error text.
inline bool parse_number(const std::string& text, bool integer, double& value, std::string& error) {
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value)) {
    error = "'" + text + "' is not a number";
    return false;
  }
  if (integer && value != std::floor(value)) {
    error = "must be a whole number, got " + text;
    return false;
  }
  return true;
}

// All the digits a bound has: 16777216, not the stream's default 1.67772e+07.
inline std::string format_bound(double v) {
  std::ostringstream out;
  out << std::setprecision(15) << v;
  return out.str();
}

// lo <= x <= hi (or lo <= x < hi when hi_open); whole numbers only when `integer`.
inline CLI::Validator number_in(double lo, double hi, bool hi_open = false, bool integer = false) {
  std::string range = "[" + format_bound(lo) + ", " + format_bound(hi) + (hi_open ? ")" : "]");
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0.0;
        std::string error;
        if (!parse_number(text, integer, v, error)) return error;
        if (v < lo || v > hi || (hi_open && v == hi))
          return "must be in " + range + ", got " + text;
        return std::string();
      },
      range);
}

// x > 0, or x >= 0 when zero is allowed.
inline CLI::Validator sign_check(bool zero_allowed, bool integer) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0.0;
        std::string error;
        if (!parse_number(text, integer, v, error)) return error;
        if (zero_allowed ? v >= 0 : v > 0) return std::string();
        return (zero_allowed ? "must be 0 or more, got " : "must be a positive number, got ") +
               text;
      },
      zero_allowed ? ">= 0" : "> 0");
}
inline CLI::Validator positive(bool integer = true) {
  return sign_check(false, integer);
}
inline CLI::Validator non_negative(bool integer = true) {
  return sign_check(true, integer);
}

}  // namespace tg::apps
