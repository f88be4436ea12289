#include "nn/rnn_lm.hpp"

namespace tg::nn {

RNNLM::RNNLM(const RNNLMConfig& config, const Tensor& pretrained) : config_(config) {
  if (config.vocab == 0 || config.d_model == 0 || config.hidden == 0 || config.layers == 0)
    throw std::invalid_argument("RNNLM: vocab, d_model, hidden and layers must be positive");
  check_tied_width("RNNLM", config.tied, config.hidden, config.d_model);
  Generator init(config.seed);
  dropout_gen_ = std::make_shared<Generator>(config.seed ^ 0xD50F0D50Full);
  check_tie(config.embedding, config.tied);
  table_ = register_module("embedding",
                           make_token_table(config.embedding, {.vocab = config.vocab,
                                                               .d_model = config.d_model,
                                                               .pretrained = pretrained,
                                                               .sparse_grad = !config.tied,
                                                               .init = &init,
                                                               .init_std = config.init_std}));
  for (size_t l = 0; l < config.layers; ++l) {
    const size_t input = l == 0 ? config.d_model : config.hidden;
    std::shared_ptr<RecurrentLayer> layer;
    if (config.cell == RecurrentCell::lstm)
      layer = std::make_shared<LSTM>(input, config.hidden, init);
    else
      layer = std::make_shared<GRU>(input, config.hidden, init);
    layers_.push_back(register_module("layers." + std::to_string(l), layer));
  }
  if (!config.tied)
    unembedding_ = register_module(
        "output",
        std::make_shared<Linear>(config.hidden, config.vocab, init,
                                 LinearOptions{.bias = false, .role = ParamRole::unembedding}));
  output_bias_ = register_parameter("output_bias", Tensor::zeros({config.vocab}, true));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(config.dropout, dropout_gen_));
}

std::pair<Tensor, std::vector<RecurrentState>> RNNLM::forward(
    const Ids& inputs, const std::vector<RecurrentState>& state) {
  if (inputs.shape.size() != 2 || inputs.shape[1] == 0)
    throw std::invalid_argument("RNNLM: inputs must be [batch, T] with T >= 1, got " +
                                to_string(inputs.shape));
  if (inputs.shape[1] > config_.max_predictions)
    throw std::invalid_argument("RNNLM: " + std::to_string(inputs.shape[1]) +
                                " predictions per row exceed max_predictions " +
                                std::to_string(config_.max_predictions));
  if (!state.empty() && state.size() != layers_.size())
    throw std::invalid_argument("RNNLM: " + std::to_string(state.size()) + " states given for " +
                                std::to_string(layers_.size()) + " layers");
  Tensor x = dropout_->forward(table_->forward(inputs));
  std::vector<RecurrentState> last;
  for (size_t l = 0; l < layers_.size(); ++l) {
    auto [y, s] = layers_[l]->forward(x, state.empty() ? RecurrentState{} : state[l]);
    x = dropout_->forward(y);
    last.push_back(std::move(s));
  }
  return {x, last};
}

Tensor RNNLM::hidden_carrying(const Ids& inputs, bool carry) {
  const bool resumes = carry && !carried_.empty() && carried_[0].h.size(0) == inputs.shape[0];
  auto [h, last] = forward(inputs, resumes ? carried_ : std::vector<RecurrentState>{});
  if (carry) {
    carried_.clear();
    for (const RecurrentState& s : last) carried_.push_back(s.detached());
  }
  return h;
}

Tensor RNNLM::logits(const Ids& inputs) {
  // Training steps carry their state through loss(); logits() only in a streamed evaluation.
  return linear(hidden_carrying(inputs, config_.carry_state && carry_in_evaluation_ && !training()),
                output_matrix(), output_bias_);
}

Tensor RNNLM::loss(const Ids& inputs, const Ids& targets) {
  if (targets.shape != inputs.shape)
    throw std::invalid_argument("RNNLM: targets " + to_string(targets.shape) + " should be " +
                                to_string(inputs.shape) + " (one per input token)");
  const Tensor h =
      hidden_carrying(inputs, config_.carry_state && (training() || carry_in_evaluation_));
  return linear_cross_entropy(reshape(h, {-1, static_cast<long>(config_.hidden)}), output_matrix(),
                              output_bias_, Ids({targets.numel()}, targets.values));
}

std::vector<Tensor> RNNLM::carried_state() const {
  std::vector<Tensor> out;
  for (const RecurrentState& s : carried_) {
    out.push_back(s.h);
    if (s.c.defined()) out.push_back(s.c);
  }
  return out;
}

void RNNLM::set_carried_state(const std::vector<Tensor>& state) {
  carried_.clear();
  if (state.empty()) return;
  const size_t per_layer = config_.cell == RecurrentCell::lstm ? 2 : 1;
  if (state.size() != per_layer * layers_.size())
    throw std::invalid_argument("RNNLM: " + std::to_string(state.size()) +
                                " state tensors given for " + std::to_string(layers_.size()) +
                                " layers of " + std::to_string(per_layer));
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Tensor& h = state[l * per_layer];
    if (h.dim() != 2 || h.size(1) != config_.hidden)
      throw std::invalid_argument("RNNLM: a carried state is " + to_string(h.shape()) +
                                  ", not [rows, " + std::to_string(config_.hidden) + "]");
    if (per_layer == 2 && state[l * per_layer + 1].shape() != h.shape())
      throw std::invalid_argument("RNNLM: a carried cell state is " +
                                  to_string(state[l * per_layer + 1].shape()) +
                                  ", not the hidden state's " + to_string(h.shape()));
    carried_.push_back({h.clone(), per_layer == 2 ? state[l * per_layer + 1].clone() : Tensor()});
  }
}

}  // namespace tg::nn
