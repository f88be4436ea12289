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

}  // namespace tg::base
