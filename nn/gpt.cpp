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
  wte_ = register_module("wte", make_token_embedding(config.vocab, c, config.embedding, pretrained,
                                                     config.sparse_embedding_grad && !config.tied,
                                                     init, 0.02f));
  wpe_ = register_module("wpe", std::make_shared<Embedding>(config.context, c, init,
                                                            EmbeddingOptions{0.02f, false}));
  drop_ = register_module("drop", std::make_shared<Dropout>(config.dropout, dropout_gen_));
  for (size_t l = 0; l < config.layers; ++l)
    blocks_.push_back(register_module("blocks." + std::to_string(l),
                                      std::make_shared<TransformerBlock>(c, config.heads, config.dropout,
                                                                         dropout_gen_, init)));
  ln_f_ = register_module("ln_f", std::make_shared<LayerNorm>(c));
  if (!config.tied)
    lm_head_ = register_module("lm_head", std::make_shared<Linear>(c, config.vocab, init, false));

  // GPT-2 initialisation of every Linear (the token table was set above).
  const float residual_std = 0.02f / std::sqrt(2.0f * static_cast<float>(config.layers));
  for (const auto& [name, p] : named_parameters()) {
    const bool embedding_table = name.rfind("wte.", 0) == 0 || name.rfind("wpe.", 0) == 0;
    if (embedding_table || p.dim() != 2) continue;  // tables set above; norms stay 1 and 0
    const bool residual = name.find("attn.proj.") != std::string::npos ||
                          name.find("mlp.proj.") != std::string::npos;
    normal_(p, init, residual ? residual_std : 0.02f);
  }
  for (const auto& [name, p] : named_parameters())
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0) zeros_(p);
}

Tensor GPT::features(const Ids& inputs) {
  if (inputs.shape.size() != 2)
    throw std::invalid_argument("GPT: inputs must be [batch, time], got " + to_string(inputs.shape));
  const size_t t = inputs.shape[1];
  if (t == 0 || t > config_.context)
    throw std::invalid_argument("GPT: sequence length " + std::to_string(t) + " is outside [1, " +
                                std::to_string(config_.context) + "] (the context size)");
  std::vector<int32_t> positions(t);
  for (size_t i = 0; i < t; ++i) positions[i] = static_cast<int32_t>(i);
  Tensor x = wte_->forward(inputs) + wpe_->forward(Ids({t}, positions));
  x = drop_->forward(x);
  for (const auto& block : blocks_) x = block->forward(x);
  return ln_f_->forward(x);
}

Tensor GPT::logits(const Ids& inputs) { return linear(features(inputs), output_matrix()); }

Tensor GPT::loss(const Ids& inputs, const Ids& targets) {
  return linear_cross_entropy(features(inputs), output_matrix(), Tensor(), targets);
}

}  // namespace tg::nn
