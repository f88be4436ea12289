// Typed configuration: every enum a user can name on the command line or in a results file
// has one table of {value, name} pairs, and these two functions are the only conversions.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tg::base {

template <class E, size_t N>
using NameTable = std::array<std::pair<E, const char*>, N>;

template <class E, size_t N>
std::string name_of(const NameTable<E, N>& table, E value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  throw std::logic_error("enum value missing from its name table");
}

// Throws "<what>: unknown value 'x' (use a, b or c)".
template <class E, size_t N>
E parse_name(const NameTable<E, N>& table, std::string_view text, std::string_view what) {
  for (const auto& [v, name] : table)
    if (text == name) return v;
  std::string choices;
  for (size_t i = 0; i < N; ++i)
    choices += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(table[i].second);
  throw std::invalid_argument(std::string(what) + ": unknown value '" + std::string(text) +
                              "' (use " + choices + ")");
}

// A name a user gives a part (a model, a kind of embedding table, an optimizer) and that the
// results files, REPORT.md's tables and the plots' keys repeat: 1 to 64 characters, ASCII
// letters, digits and . _ + -, starting with a letter or a digit. Nothing in it is markup to
// Markdown or gnuplot, an option to a program, or a path.
inline bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name.front())) return false;
  for (char c : name)
    if (!alnum(c) && c != '.' && c != '_' && c != '+' && c != '-') return false;
  return true;
}
inline constexpr const char* kPlainNameRule =
    "1 to 64 ASCII letters, digits and . _ + -, starting with a letter or a digit";

}  // namespace tg::base
