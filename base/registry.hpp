// A table of named, replaceable parts: the models, the optimizers. The library registers its
// own at start-up; a user's main registers more (or replaces one) before handing over to a
// program, and every flag, results file and report then knows the part by its name.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/enum_names.hpp"

namespace tg::base {

template <class Factory>
class Registry {
 public:
  struct Entry {
    std::string name, description;
    Factory factory;
    bool built_in = false;  // the library's own, not replaced by a user's
  };

  // `kind` names the parts in messages ("model": "unknown model 'x' (registered: ...)").
  Registry(std::string kind, std::vector<Entry> built_ins)
      : kind_(std::move(kind)), entries_(std::move(built_ins)) {
    for (Entry& e : entries_) e.built_in = true;
  }

  // Adds `name`, or replaces the part of that name (which is then no longer the built-in one).
  void add(const std::string& name, Factory factory, const std::string& description) {
    if (!plain_name(name))
      throw std::invalid_argument("'" + name + "' is not a usable name for a " + kind_ + " (" +
                                  kPlainNameRule + ")");
    if constexpr (std::is_constructible_v<bool, const Factory&>)
      if (!factory) throw std::invalid_argument("no factory for the " + kind_ + " '" + name + "'");
    Entry entry{name, description, std::move(factory), false};
    auto it = std::ranges::find(entries_, name, &Entry::name);
    if (it != entries_.end())
      *it = std::move(entry);
    else
      entries_.push_back(std::move(entry));
  }

  const Entry* find(std::string_view name) const {
    auto it = std::ranges::find(entries_, name, &Entry::name);
    return it == entries_.end() ? nullptr : &*it;
  }
  // Throws std::invalid_argument "<flag>: unknown <kind> 'x' (registered: a, b)".
  const Entry& at(std::string_view name, std::string_view flag) const {
    if (const Entry* e = find(name)) return *e;
    throw std::invalid_argument(std::string(flag) + ": " + unknown_message(name));
  }
  bool built_in(std::string_view name) const {
    const Entry* e = find(name);
    return e && e->built_in;
  }

  // The library's parts first, then the user's in registration order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }
  // "a (its description), b, c", for --help.
  std::string help() const {
    std::string out;
    for (const Entry& e : entries_)
      out += (out.empty() ? "" : ", ") + e.name +
             (e.description.empty() ? "" : " (" + e.description + ")");
    return out;
  }
  std::string unknown_message(std::string_view name) const {
    std::string list;
    for (const Entry& e : entries_) list += (list.empty() ? "" : ", ") + e.name;
    return "unknown " + kind_ + " '" + std::string(name) + "' (registered: " + list + ")";
  }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

}  // namespace tg::base
