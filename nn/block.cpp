#include "nn/block.hpp"

namespace tg::nn {

std::shared_ptr<Layer> make_attention(const BlockContext& c, const GPTParts& parts) {
  if (parts.attention) return parts.attention(c);
  return std::make_shared<CausalSelfAttention>(c.d_model, c.heads, c.dropout, c.dropout_gen, c.init,
                                               c.rotary);
}
std::shared_ptr<Layer> make_mlp(const BlockContext& c, const GPTParts& parts) {
  return parts.mlp ? parts.mlp(c) : std::make_shared<MLP>(c);
}
std::shared_ptr<Layer> make_norm(const BlockContext& c, const GPTParts& parts) {
  return parts.norm ? parts.norm(c) : std::make_shared<LayerNorm>(c.d_model);
}
std::shared_ptr<Layer> make_block(const BlockContext& c, const GPTParts& parts) {
  return parts.block ? parts.block(c) : std::make_shared<TransformerBlock>(c, parts);
}

MLP::MLP(const BlockContext& c) {
  fc_ = register_module("fc", std::make_shared<Linear>(c.d_model, 4 * c.d_model, c.init));
  proj_ = register_module(
      "proj", std::make_shared<Linear>(4 * c.d_model, c.d_model, c.init,
                                       LinearOptions{.role = ParamRole::residual_weight}));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(c.dropout, c.dropout_gen));
}

TransformerBlock::TransformerBlock(const BlockContext& c, const GPTParts& parts) {
  ln1_ = register_module("ln1", make_norm(c, parts));
  attn_ = register_module("attn", make_attention(c, parts));
  ln2_ = register_module("ln2", make_norm(c, parts));
  mlp_ = register_module("mlp", make_mlp(c, parts));
}

Tensor TransformerBlock::forward(const Tensor& x) const {
  Tensor h = x + attn_->forward(ln1_->forward(x));
  return h + mlp_->forward(ln2_->forward(h));
}

}  // namespace tg::nn
