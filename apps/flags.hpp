// The training flags shared by train_lm and the experiment binaries, so that every program
// spells them the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

#include "train/trainer.hpp"

namespace tg::apps {

void add_training_flags(CLI::App& app, train::TrainConfig& c);
void add_data_flags(CLI::App& app, text::LMDataOptions& d);
// An option whose value is a name from an enum's table, converted once, here; `then`, if
// given, runs after each conversion (to resolve or report the value).
template <class E, size_t N>
CLI::Option* add_enum_option(CLI::App& app, const std::string& flag, E& value,
                             const base::NameTable<E, N>& table, const std::string& help,
                             std::function<void()> then = {}) {
  std::map<std::string, E> names;
  std::string choices;
  for (const auto& [v, name] : table) {
    names.emplace(name, v);
    choices += (choices.empty() ? "" : " | ") + std::string(name);
  }
  // A function option, not a transformer: the parsed result stays the name, so that
  // describe_flags prints a command line that can be pasted back.
  return app
      .add_option_function<std::string>(
          flag,
          [&value, names, then](const std::string& name) {
            value = names.at(name);
            if (then) then();
          },
          help.empty() ? choices : choices + " (" + help + ")")
      ->check(CLI::IsMember(names))
      ->default_str(base::name_of(table, value));
}

// "--flag value ..." for every option, with the values in effect (defaults included).
std::string describe_flags(const CLI::App& app);

}  // namespace tg::apps
