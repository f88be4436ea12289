// The model registry: every program that trains (train_lm, the experiments, bench_train)
// builds its model by name through here, so a model a user registers gets every flag,
// checkpoint, MPI and report feature of the built-in ones.
//
//   train::register_model("my-gpt", [](const train::ModelSpec& s) {
//     nn::GPTConfig g = train::gpt_config(s);
//     g.parts.mlp = [](const nn::BlockContext& b) { return std::make_shared<SwiGLU>(b); };
//     return std::make_unique<nn::GPT>(g, s.pretrained);
//   });
//   return apps::train_lm_main(argc, argv);   // now accepts --model my-gpt
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/gpt.hpp"
#include "nn/language_model.hpp"
#include "nn/nplm.hpp"
#include "nn/rnn_lm.hpp"
#include "train/config.hpp"

namespace tg::train {

// Everything a factory needs: the architecture flags, the vocabulary size, the seed, and the
// pretrained table ([vocab, d_model]) when the embedding mode loads one (undefined otherwise).
struct ModelSpec {
  const ModelConfig& config;
  size_t vocab;
  uint64_t seed;
  Tensor pretrained;
};

using ModelFactory = std::function<std::unique_ptr<nn::LanguageModel>(const ModelSpec&)>;

// What training allocates at least, in bytes: each parameter with its gradient, two Adam
// moments and the best-epoch copy, and one batch's activations kept for backward.
struct MemoryEstimate {
  double parameters = 0, activations = 0;
  double total() const { return parameters + activations; }
};

// A registered model: how it is built, and what is known about it by name, before it is.
struct ModelEntry {
  ModelFactory make;
  // Training's memory from the flags, so that a model that cannot fit is refused before
  // anything is allocated. Empty: its parameters are counted once it is built.
  std::function<MemoryEstimate(const TrainConfig&, size_t vocab)> memory = {};
  // Flags of other models this one does not read: given to it they are refused, saying `why`
  // ("--heads: the lstm has no attention ...").
  std::vector<std::string> unread_flags = {};
  std::string why_unread = {};
  // Its tied output layer reads the hidden state, so a study that ties it sets --hidden to
  // --d-model for every row of the model (one width for the tied and the untied rows).
  bool ties_through_hidden = false;
};

// Registers (or replaces) a model under `name`; `description` is shown by --help.
void register_model(const std::string& name, ModelEntry entry, const std::string& description = "");
void register_model(const std::string& name, ModelFactory factory,
                    const std::string& description = "");
// The entry of a registered model; throws naming the registered ones.
const ModelEntry& model_entry(const std::string& name);
// The model's estimate (its entry's memory), zero where its entry has none.
MemoryEstimate training_memory(const TrainConfig& c, size_t vocab);
bool has_model(const std::string& name);
std::vector<std::string> model_names();  // built-in first, then in registration order
std::string model_help();                // "gpt (GPT-2 ...), nplm (...), my-gpt"
// "unknown model 'rnn' (registered: gpt, nplm, my-gpt)"
std::string unknown_model_message(const std::string& name);
// --model-option MODEL:KEY=VALUE gives a setting to one model of a study, KEY=VALUE to every
// model: the options that apply to `model` (keys without their prefix).
std::map<std::string, std::string> options_for(const std::map<std::string, std::string>& options,
                                               const std::string& model);
// Throws, as building the model would, when options apply to `model` and it takes none (the
// built-in models take their settings from flags), or when an option is scoped to a model
// that is not among `models` (a study's --models; a run's --model): checked before any data
// is read.
void check_model_options(const std::map<std::string, std::string>& options,
                         const std::vector<std::string>& models);
// Throws naming the registered models when `spec.config.name` is unknown.
std::unique_ptr<nn::LanguageModel> make_model(const ModelSpec& spec);

// The built-in models' configurations from the flags, for factories that start from them.
nn::GPTConfig gpt_config(const ModelSpec& spec);
nn::NPLMConfig nplm_config(const ModelSpec& spec);
nn::RNNLMConfig rnn_config(const ModelSpec& spec, nn::RecurrentCell cell);

}  // namespace tg::train
