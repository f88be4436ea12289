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

// Per GPT layer about 16 vectors of d_model per token and the attention weights.
MemoryEstimate gpt_memory(const TrainConfig& c, size_t vocab) {
  const ModelConfig& m = c.model;
  const double d = static_cast<double>(m.d_model), v = static_cast<double>(vocab);
  const double tokens = static_cast<double>(c.batch) * static_cast<double>(m.context);
  const double layers = static_cast<double>(m.layers), t = static_cast<double>(m.context);
  const double params =
      v * d + t * d + layers * (12 * d * d + 13 * d) + 2 * d + (m.tied ? 0 : v * d);
  return {4.0 * 5 * params,
          4.0 * tokens * layers * (16 * d + 2 * static_cast<double>(m.heads) * t)};
}

MemoryEstimate nplm_memory(const TrainConfig& c, size_t vocab) {
  const ModelConfig& m = c.model;
  const double d = static_cast<double>(m.d_model), v = static_cast<double>(vocab);
  const double tokens = static_cast<double>(c.batch) * static_cast<double>(m.context);
  const double inputs = static_cast<double>(m.ngram - 1) * d, h = static_cast<double>(m.hidden);
  const double params =
      v * d + inputs * h + h + (m.tied ? 0 : h * v) + v + (m.direct ? inputs * v : 0);
  return {4.0 * 5 * params, 4.0 * tokens * (inputs + 2 * h)};
}

// Each layer: gates x hidden rows over its input and its state, two biases; the first reads
// the embeddings (d_model), the others the layer below (hidden). Per token and layer backward
// keeps the gates, the states and (LSTM) the cells.
MemoryEstimate rnn_memory(const TrainConfig& c, size_t vocab, double gates) {
  const ModelConfig& m = c.model;
  const double d = static_cast<double>(m.d_model), v = static_cast<double>(vocab);
  const double tokens = static_cast<double>(c.batch) * static_cast<double>(m.context);
  const double h = static_cast<double>(m.hidden), layers = static_cast<double>(m.layers);
  const double recurrent =
      gates * h * (d + h + 2) + (layers > 1 ? (layers - 1) * gates * h * (2 * h + 2) : 0);
  const double params = v * d + recurrent + (m.tied ? 0 : v * h) + v;
  return {4.0 * 5 * params, 4.0 * tokens * layers * (gates + 3) * h};
}

ModelEntry recurrent(nn::RecurrentCell cell, double gates) {
  return {
      .make =
          [cell](const ModelSpec& s) {
            return std::make_unique<nn::RNNLM>(rnn_config(without_options(s), cell), s.pretrained);
          },
      .memory = [gates](const TrainConfig& c, size_t vocab) { return rnn_memory(c, vocab, gates); },
      .unread_flags = {"--heads", "--positions"},
      .why_unread = "has no attention (its width is --hidden); give it to --model gpt",
      .ties_through_hidden = true};
}

// A function-local registry, so that registering from another translation unit's static
// initialiser cannot run before it exists.
base::Registry<ModelEntry>& registry() {
  static base::Registry<ModelEntry> entries(
      "model",
      {
          {"gpt",
           "GPT-2 architecture",
           {.make =
                [](const ModelSpec& s) {
                  return std::make_unique<nn::GPT>(gpt_config(without_options(s)), s.pretrained);
                },
            .memory = gpt_memory}},
          {"nplm",
           "Bengio et al. 2003",
           {.make =
                [](const ModelSpec& s) {
                  return std::make_unique<nn::NPLM>(nplm_config(without_options(s)), s.pretrained);
                },
            .memory = nplm_memory,
            .ties_through_hidden = true}},
          {"lstm", "an LSTM language model, PyTorch's word_language_model",
           recurrent(nn::RecurrentCell::lstm, 4)},
          {"gru", "the same with GRU layers", recurrent(nn::RecurrentCell::gru, 3)},
      });
  return entries;
}

}  // namespace

void register_model(const std::string& name, ModelEntry entry, const std::string& description) {
  if (!entry.make) throw std::invalid_argument("no factory for the model '" + name + "'");
  registry().add(name, std::move(entry), description);
}

void register_model(const std::string& name, ModelFactory factory, const std::string& description) {
  register_model(name, ModelEntry{.make = std::move(factory)}, description);
}

const ModelEntry& model_entry(const std::string& name) {
  return registry().at(name, "--model").factory;
}

MemoryEstimate training_memory(const TrainConfig& c, size_t vocab) {
  const ModelEntry& entry = model_entry(c.model.name);
  return entry.memory ? entry.memory(c, vocab) : MemoryEstimate{};
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
  return registry().at(spec.config.name, "--model").factory.make(spec);
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
