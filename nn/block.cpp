#include "nn/block.hpp"

namespace tg::nn {

MLP::MLP(size_t d_model, float dropout, std::shared_ptr<Generator> dropout_gen, Generator& init) {
  fc_ = register_module("fc", std::make_shared<Linear>(d_model, 4 * d_model, init));
  proj_ = register_module("proj", std::make_shared<Linear>(4 * d_model, d_model, init));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(dropout, std::move(dropout_gen)));
}

TransformerBlock::TransformerBlock(size_t d_model, size_t heads, float dropout,
                                   std::shared_ptr<Generator> dropout_gen, Generator& init) {
  ln1_ = register_module("ln1", std::make_shared<LayerNorm>(d_model));
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(d_model, heads, dropout,
                                                                        dropout_gen, init));
  ln2_ = register_module("ln2", std::make_shared<LayerNorm>(d_model));
  mlp_ = register_module("mlp", std::make_shared<MLP>(d_model, dropout, dropout_gen, init));
}

Tensor TransformerBlock::forward(const Tensor& x) const {
  Tensor h = x + attn_->forward(ln1_->forward(x));
  return h + mlp_->forward(ln2_->forward(h));
}

}  // namespace tg::nn
