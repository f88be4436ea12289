// The training flags shared by train_lm and the experiment binaries, so that every program
// spells them the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "train/trainer.hpp"

namespace tg::train {

void add_training_flags(CLI::App& app, TrainConfig& c);
void add_data_flags(CLI::App& app, text::LMDataOptions& d);
// "--flag value ..." for every option, with the values in effect (defaults included).
std::string describe_flags(const CLI::App& app);

}  // namespace tg::train
