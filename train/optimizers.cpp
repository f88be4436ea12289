#include "train/optimizers.hpp"

#include <cmath>
#include <stdexcept>

#include "base/registry.hpp"

namespace tg::train {

namespace {

optim::AdamOptions adam_options(const OptimizerSpec& s) {
  return {.lr = s.config.lr};
}

// A function-local registry, so that registering from another translation unit's static
// initialiser cannot run before it exists.
base::Registry<OptimizerFactory>& registry() {
  static base::Registry<OptimizerFactory> entries(
      "optimizer",
      {{"adamw", "decoupled weight decay on matrices, --table-decay for the vocabulary's",
        [](const OptimizerSpec& s) {
          return std::make_unique<optim::Adam>(decay_groups(s), adam_options(s), true);
        }},
       {"adam", "--weight-decay as L2 on every parameter",
        [](const OptimizerSpec& s) {
          return std::make_unique<optim::Adam>(optim::single_group(s.model, s.config.weight_decay),
                                               adam_options(s), false);
        }},
       {"sgd", "with --momentum",
        [](const OptimizerSpec& s) {
          return std::make_unique<optim::SGD>(optim::single_group(s.model, s.config.weight_decay),
                                              optim::SGDOptions{s.config.lr, s.config.momentum});
        }},
       {"lazy-adam", "AdamW that moves only the batch's rows of a sparse table",
        [](const OptimizerSpec& s) {
          return std::make_unique<optim::LazyAdam>(decay_groups(s), adam_options(s));
        }}});
  return entries;
}

}  // namespace

void register_optimizer(const std::string& name, OptimizerFactory factory,
                        const std::string& description) {
  registry().add(name, std::move(factory), description);
}

bool has_optimizer(const std::string& name) {
  return registry().find(name) != nullptr;
}

std::vector<std::string> optimizer_names() {
  return registry().names();
}

std::string optimizer_help() {
  return registry().help();
}

std::string unknown_optimizer_message(const std::string& name) {
  return registry().unknown_message(name);
}

void check_optimizer_options(const TrainConfig& c) {
  if (c.optimizer_options.empty() || !registry().built_in(c.optimizer)) return;
  const auto& [key, value] = *c.optimizer_options.begin();
  throw std::invalid_argument("--optimizer-option " + key + "=" + value + ": the built-in " +
                              "optimizer '" + c.optimizer +
                              "' takes no options (its settings are flags: --lr, "
                              "--weight-decay, --table-decay, --momentum)");
}

std::unique_ptr<optim::Optimizer> make_optimizer(const OptimizerSpec& spec) {
  check_optimizer_options(spec.config);
  auto optimizer = registry().at(spec.config.optimizer, "--optimizer").factory(spec);
  if (!optimizer)
    throw std::runtime_error("--optimizer " + spec.config.optimizer +
                             ": its factory built nothing");
  for (const auto& [key, value] : spec.config.optimizer_options)
    if (!spec.options_read.count(key)) {
      std::string read;
      for (const std::string& k : spec.options_read) read += (read.empty() ? "" : ", ") + k;
      throw std::invalid_argument("--optimizer-option " + key + "=" + value + ": " +
                                  spec.config.optimizer + " has no option '" + key +
                                  "' (it reads " + (read.empty() ? std::string("none") : read) +
                                  ")");
    }
  return optimizer;
}

std::vector<optim::ParamGroup> decay_groups(const OptimizerSpec& s) {
  return optim::decay_groups(s.model, s.config.weight_decay, s.config.table_decay);
}

bool decays_tables_by_role(const std::string& optimizer) {
  return (optimizer == "adamw" || optimizer == "lazy-adam") && registry().built_in(optimizer);
}

float optimizer_option(const OptimizerSpec& s, const std::string& key, float fallback) {
  s.options_read.insert(key);
  const auto it = s.config.optimizer_options.find(key);
  if (it == s.config.optimizer_options.end()) return fallback;
  size_t used = 0;
  float value = 0.0f;
  try {
    value = std::stof(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size() || !std::isfinite(value))
    throw std::invalid_argument("--optimizer-option " + key + "=" + it->second +
                                ": not a finite number");
  return value;
}

}  // namespace tg::train
