// The optimizer registry: train_lm and the experiments build their optimizer by
// name through here (--optimizer), so an optimizer a user registers is trained, checkpointed,
// resumed and reported like the built-in ones.
//
//   train::register_optimizer("lion", [](const train::OptimizerSpec& s) {
//     return std::make_unique<Lion>(train::decay_groups(s), s.config.lr, ...);
//   }, "Chen et al. 2023");
//   return apps::train_lm_main(argc, argv);   // now accepts --optimizer lion
//
// An optimizer keeps its state in Optimizer::slot tensors of the kinds it names
// (Optimizer::state_kinds): they are saved in checkpoints as "optim.<kind>.<parameter>" and a
// resume refuses state of another optimizer, or of a kind this one does not keep.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nn/language_model.hpp"
#include "optim/optimizer.hpp"
#include "train/config.hpp"

namespace tg::train {

// What a factory gets: the run's configuration (lr, weight_decay, momentum, table_decay and
// its own --optimizer-option settings in optimizer_options) and the model to optimise.
struct OptimizerSpec {
  const TrainConfig& config;
  const nn::LanguageModel& model;
  // The options optimizer_option read: make_optimizer refuses any other (a misspelt key).
  mutable std::set<std::string> options_read = {};
};

using OptimizerFactory = std::function<std::unique_ptr<optim::Optimizer>(const OptimizerSpec&)>;

// Registers (or replaces) an optimizer under `name`; `description` is shown by --help.
void register_optimizer(const std::string& name, OptimizerFactory factory,
                        const std::string& description = "");
bool has_optimizer(const std::string& name);
std::vector<std::string> optimizer_names();  // built-in first, then in registration order
std::string optimizer_help();
std::string unknown_optimizer_message(const std::string& name);
// Throws when options are given to a built-in optimizer (their settings are flags): checked
// before any data is read.
void check_optimizer_options(const TrainConfig& config);
// Throws naming the registered optimizers when config.optimizer is unknown.
std::unique_ptr<optim::Optimizer> make_optimizer(const OptimizerSpec& spec);

// The parameter groups AdamW uses: matrices decay by config.weight_decay, biases and norm
// scales do not, the vocabulary's tables as config.table_decay says (optim::decay_groups).
std::vector<optim::ParamGroup> decay_groups(const OptimizerSpec& spec);

// Whether the optimizer of that name is a built-in one that decays by role, as --table-decay
// says (adamw, lazy-adam); adam and sgd decay every parameter alike; a user's: unknown, false.
bool decays_tables_by_role(const std::string& optimizer);

// A number from config.optimizer_options[key], or `fallback` when not given; throws naming
// --optimizer-option KEY when the value is not a finite number. A factory reads its options
// through this; a given option no factory read is refused when the optimizer is built.
float optimizer_option(const OptimizerSpec& spec, const std::string& key, float fallback);

}  // namespace tg::train
