#include "nn/nplm.hpp"

#include <cmath>

namespace tg::nn {

NPLM::NPLM(const NPLMConfig& config, const Tensor& pretrained) : config_(config) {
  if (config.vocab == 0 || config.d_model == 0 || config.hidden == 0)
    throw std::invalid_argument("NPLM: vocab, d_model and hidden must be positive");
  if (config.ngram < 2)
    throw std::invalid_argument("NPLM: ngram must be at least 2, got " +
                                std::to_string(config.ngram));
  check_tied_width("NPLM", config.tied, config.hidden, config.d_model);
  Generator init(config.seed);
  dropout_gen_ = std::make_shared<Generator>(config.seed ^ 0xD50F0D50Full);
  const size_t input_width = (config.ngram - 1) * config.d_model;
  const float table_std = 1.0f / std::sqrt(static_cast<float>(config.d_model));
  check_tie(config.embedding, config.tied);
  table_ = register_module(
      "embedding", make_token_table(config.embedding,
                                    {.vocab = config.vocab,
                                     .d_model = config.d_model,
                                     .pretrained = pretrained,
                                     .sparse_grad = config.sparse_embedding_grad && !config.tied,
                                     .init = &init,
                                     .init_std = table_std}));
  hidden_ = register_module("hidden", std::make_shared<Linear>(input_width, config.hidden, init));
  if (!config.tied)
    unembedding_ = register_module(
        "output",
        std::make_shared<Linear>(config.hidden, config.vocab, init,
                                 LinearOptions{.bias = false, .role = ParamRole::unembedding}));
  if (config.direct)
    direct_ = register_module("direct", std::make_shared<Linear>(input_width, config.vocab, init,
                                                                 LinearOptions{.bias = false}));
  output_bias_ = register_parameter("output_bias", Tensor::zeros({config.vocab}, true));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(config.dropout, dropout_gen_));
}

std::pair<Tensor, Tensor> NPLM::features(const Ids& inputs) {
  const size_t context = config_.ngram - 1;
  if (inputs.shape.size() != 2 || inputs.shape[1] < context)
    throw std::invalid_argument("NPLM: inputs must be [batch, " + std::to_string(warmup()) +
                                " + T] with T >= 1, got " + to_string(inputs.shape));
  const size_t b = inputs.shape[0], len = inputs.shape[1], t = len - warmup();
  if (t > config_.max_predictions)
    throw std::invalid_argument("NPLM: " + std::to_string(t) +
                                " predictions per row exceed max_predictions " +
                                std::to_string(config_.max_predictions));
  // Each prediction's window of n-1 ids, gathered on the host: [B*T, n-1].
  std::vector<int32_t> windows(b * t * context);
  for (size_t r = 0; r < b; ++r)
    for (size_t i = 0; i < t; ++i)
      std::copy_n(inputs.values.begin() + static_cast<long>(r * len + i), context,
                  windows.begin() + static_cast<long>((r * t + i) * context));
  const long rows = static_cast<long>(b * t);
  Tensor x = reshape(table_->forward(Ids({b * t, context}, std::move(windows))), {rows, -1});
  Tensor h = dropout_->forward(tanh(hidden_->forward(x)));
  return {h, x};
}

Tensor NPLM::logits(const Ids& inputs) {
  const auto [h, x] = features(inputs);
  Tensor y = linear(h, output_matrix(), output_bias_);
  if (direct_) y = y + direct_->forward(x);
  const long b = static_cast<long>(inputs.shape[0]);
  return reshape(y, {b, -1, static_cast<long>(config_.vocab)});
}

Tensor NPLM::loss(const Ids& inputs, const Ids& targets) {
  if (direct_) return LanguageModel::loss(inputs, targets);  // two linear terms: composed
  const auto [h, x] = features(inputs);
  const Shape expected{inputs.shape[0], h.size(0) / inputs.shape[0]};
  if (targets.shape != expected)
    throw std::invalid_argument("NPLM: targets " + to_string(targets.shape) + " should be " +
                                to_string(expected) + " (one per prediction)");
  return linear_cross_entropy(h, output_matrix(), output_bias_,
                              Ids({targets.numel()}, targets.values));
}

}  // namespace tg::nn
