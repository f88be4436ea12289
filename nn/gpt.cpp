#include "nn/gpt.hpp"

#include <cmath>

namespace tg::nn {

namespace {
void normal_(const Tensor& t, Generator& gen, float std) {
  Tensor target = t;
  for (size_t i = 0; i < target.numel(); ++i) target.data()[i] = std * gen.normal();
}
void zeros_(const Tensor& t) {
  if (!t.defined()) return;
  Tensor target = t;
  std::fill(target.data(), target.data() + target.numel(), 0.0f);
}
}  // namespace

GPT::GPT(const GPTConfig& config, const Tensor& pretrained) : config_(config) {
  if (config.vocab == 0 || config.context == 0 || config.d_model == 0 || config.layers == 0)
    throw std::invalid_argument("GPT: vocab, context, d_model and layers must be positive");
  Generator init(config.seed);
  dropout_gen_ = std::make_shared<Generator>(config.seed ^ 0xD50F0D50Full);
  const size_t c = config.d_model;
  check_tie(config.embedding, config.tied);
  table_ = register_module(
      "wte", make_token_table(config.embedding,
                              {.vocab = config.vocab,
                               .d_model = c,
                               .pretrained = pretrained,
                               .sparse_grad = config.sparse_embedding_grad && !config.tied,
                               .init = &init,
                               .init_std = 0.02f}));
  if (config.positions == Positions::learned)
    wpe_ = register_module("wpe", std::make_shared<Embedding>(
                                      config.context, c, init,
                                      EmbeddingOptions{.init_std = 0.02f, .sparse_grad = false}));
  const bool rotary = config.positions == Positions::rotary;
  drop_ = register_module("drop", std::make_shared<Dropout>(config.dropout, dropout_gen_));
  for (size_t l = 0; l < config.layers; ++l) {
    const BlockContext ctx{.d_model = c,
                           .heads = config.heads,
                           .context = config.context,
                           .index = l,
                           .layers = config.layers,
                           .dropout = config.dropout,
                           .dropout_gen = dropout_gen_,
                           .init = init,
                           .rotary = rotary};
    blocks_.push_back(
        register_module("blocks." + std::to_string(l), make_block(ctx, config.parts)));
  }
  // The final norm's context: a block after the last (index = layers).
  const BlockContext final_ctx{.d_model = c,
                               .heads = config.heads,
                               .context = config.context,
                               .index = config.layers,
                               .layers = config.layers,
                               .dropout = config.dropout,
                               .dropout_gen = dropout_gen_,
                               .init = init,
                               .rotary = rotary};
  ln_f_ = register_module("ln_f", make_norm(final_ctx, config.parts));
  if (!config.tied)
    unembedding_ = register_module(
        "lm_head",
        std::make_shared<Linear>(c, config.vocab, init,
                                 LinearOptions{.bias = false, .role = ParamRole::unembedding}));
  init_gpt2(*this, config.layers, init);  // the token table was set above
}

void init_gpt2(const Module& model, size_t layers, Generator& gen) {
  const float residual_std =
      0.02f / std::sqrt(2.0f * static_cast<float>(std::max<size_t>(layers, 1)));
  const auto params = model.parameters_with_roles();
  for (const auto& p : params) {
    if (p.role == ParamRole::weight || p.role == ParamRole::unembedding)
      normal_(p.tensor, gen, 0.02f);
    if (p.role == ParamRole::residual_weight) normal_(p.tensor, gen, residual_std);
  }
  for (const auto& p : params)
    if (p.role == ParamRole::bias) zeros_(p.tensor);
}

Tensor GPT::features(const Ids& inputs) {
  if (inputs.shape.size() != 2)
    throw std::invalid_argument("GPT: inputs must be [batch, time], got " +
                                to_string(inputs.shape));
  const size_t t = inputs.shape[1];
  if (t == 0 || t > config_.context)
    throw std::invalid_argument("GPT: sequence length " + std::to_string(t) + " is outside [1, " +
                                std::to_string(config_.context) + "] (the context size)");
  Tensor x = table_->forward(inputs);
  if (wpe_) {
    std::vector<int32_t> positions(t);
    for (size_t i = 0; i < t; ++i) positions[i] = static_cast<int32_t>(i);
    x = x + wpe_->forward(Ids({t}, positions));
  }
  x = drop_->forward(x);
  for (const auto& block : blocks_) x = block->forward(x);
  return ln_f_->forward(x);
}

Tensor GPT::logits(const Ids& inputs) {
  return linear(features(inputs), output_matrix());
}

Tensor GPT::loss(const Ids& inputs, const Ids& targets) {
  return linear_cross_entropy(features(inputs), output_matrix(), Tensor(), targets);
}

}  // namespace tg::nn
