#include "train/models.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/registry.hpp"

namespace tg::train {

namespace {

// The built-in models take their settings from flags only: a --model-option given to them is a
// mistake (a misspelt flag, or meant for another model), not a setting to ignore.
void refuse_options(const std::map<std::string, std::string>& options, const std::string& name) {
  if (!options.empty())
    throw std::invalid_argument("--model-option " + options.begin()->first + "=" +
                                options.begin()->second + ": the built-in model '" + name +
                                "' takes no model options (its settings are flags: see --help; "
                                "MODEL:KEY=VALUE gives an option to one model of a study)");
}

const ModelSpec& without_options(const ModelSpec& s) {
  refuse_options(s.config.options, s.config.name);
  return s;
}

// A function-local registry, so that registering from another translation unit's static
// initialiser cannot run before it exists.
base::Registry<ModelFactory>& registry() {
  static base::Registry<ModelFactory> entries(
      "model",
      {
          {"gpt", "GPT-2 architecture",
           [](const ModelSpec& s) {
             return std::make_unique<nn::GPT>(gpt_config(without_options(s)), s.pretrained);
           }},
          {"nplm", "Bengio et al. 2003",
           [](const ModelSpec& s) {
             return std::make_unique<nn::NPLM>(nplm_config(without_options(s)), s.pretrained);
           }},
          {"lstm", "an LSTM language model, PyTorch's word_language_model",
           [](const ModelSpec& s) {
             return std::make_unique<nn::RNNLM>(
                 rnn_config(without_options(s), nn::RecurrentCell::lstm), s.pretrained);
           }},
          {"gru", "the same with GRU layers",
           [](const ModelSpec& s) {
             return std::make_unique<nn::RNNLM>(
                 rnn_config(without_options(s), nn::RecurrentCell::gru), s.pretrained);
           }},
      });
  return entries;
}

}  // namespace

void register_model(const std::string& name, ModelFactory factory, const std::string& description) {
  registry().add(name, std::move(factory), description);
}

std::map<std::string, std::string> options_for(const std::map<std::string, std::string>& options,
                                               const std::string& model) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : options) {
    const size_t colon = key.find(':');
    if (colon == std::string::npos)
      out[key] = value;
    else if (key.substr(0, colon) == model)
      out[key.substr(colon + 1)] = value;
  }
  return out;
}

void check_model_options(const std::map<std::string, std::string>& options,
                         const std::vector<std::string>& models) {
  for (const auto& [key, value] : options)
    if (const size_t colon = key.find(':');
        colon != std::string::npos &&
        std::ranges::find(models, key.substr(0, colon)) == models.end())
      throw std::invalid_argument("--model-option " + key + "=" + value + ": '" +
                                  key.substr(0, colon) + "' is not a model of this run or study");
  for (const std::string& model : models)
    if (registry().built_in(model)) refuse_options(options_for(options, model), model);
}

bool has_model(const std::string& name) {
  return registry().find(name) != nullptr;
}

std::vector<std::string> model_names() {
  return registry().names();
}

std::string model_help() {
  return registry().help();
}

std::string unknown_model_message(const std::string& name) {
  return registry().unknown_message(name);
}

std::unique_ptr<nn::LanguageModel> make_model(const ModelSpec& spec) {
  return registry().at(spec.config.name, "--model").factory(spec);
}

nn::GPTConfig gpt_config(const ModelSpec& s) {
  const ModelConfig& c = s.config;
  nn::GPTConfig g;
  g.vocab = s.vocab;
  g.context = c.context;
  g.d_model = c.d_model;
  g.layers = c.layers;
  g.heads = c.heads;
  g.dropout = c.dropout;
  g.tied = c.tied;
  g.embedding = c.embedding;
  g.positions = c.positions;
  g.seed = s.seed;
  return g;
}

nn::NPLMConfig nplm_config(const ModelSpec& s) {
  const ModelConfig& c = s.config;
  nn::NPLMConfig n;
  n.vocab = s.vocab;
  n.ngram = c.ngram;
  n.d_model = c.d_model;
  n.hidden = c.hidden;
  n.direct = c.direct;
  n.tied = c.tied;
  n.dropout = c.dropout;
  n.embedding = c.embedding;
  n.seed = s.seed;
  n.max_predictions = std::max<size_t>(c.context, 256);
  return n;
}

nn::RNNLMConfig rnn_config(const ModelSpec& s, nn::RecurrentCell cell) {
  const ModelConfig& c = s.config;
  nn::RNNLMConfig r;
  r.vocab = s.vocab;
  r.cell = cell;
  r.d_model = c.d_model;
  r.hidden = c.hidden;
  r.layers = c.layers;
  r.dropout = c.dropout;
  r.tied = c.tied;
  r.embedding = c.embedding;
  r.carry_state = true;  // the trainer streams the split: truncated backpropagation through time
  r.seed = s.seed;
  r.max_predictions = std::max<size_t>(c.context, 256);
  return r;
}

}  // namespace tg::train
