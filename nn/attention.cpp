#include "nn/attention.hpp"

#include <cmath>

namespace tg::nn {

CausalSelfAttention::CausalSelfAttention(size_t d_model, size_t heads, float dropout,
                                         std::shared_ptr<Generator> dropout_gen, Generator& init,
                                         bool rotary)
    : d_model_(d_model), heads_(heads), rotary_(rotary) {
  if (heads == 0 || d_model % heads != 0)
    throw std::invalid_argument("CausalSelfAttention: d_model " + std::to_string(d_model) +
                                " is not divisible by " + std::to_string(heads) + " heads");
  qkv_ = register_module("qkv", std::make_shared<Linear>(d_model, 3 * d_model, init));
  proj_ = register_module(
      "proj", std::make_shared<Linear>(d_model, d_model, init,
                                       LinearOptions{.role = ParamRole::residual_weight}));
  attn_dropout_ = register_module("attn_dropout", std::make_shared<Dropout>(dropout, dropout_gen));
  resid_dropout_ =
      register_module("resid_dropout", std::make_shared<Dropout>(dropout, dropout_gen));
}

Tensor CausalSelfAttention::forward(const Tensor& x) const {
  if (x.dim() != 3 || x.size(2) != d_model_)
    throw std::invalid_argument("CausalSelfAttention: input " + to_string(x.shape()) +
                                " should be [B, T, " + std::to_string(d_model_) + "]");
  // One fused op (autograd/ops_attention.cpp), checked against PyTorch and, dropout
  // included, against the same computation composed from permute, matmul, softmax, dropout.
  const Tensor qkv = rotary_ ? rotary_qk(qkv_->forward(x), heads_) : qkv_->forward(x);
  const Tensor y =
      causal_attention(qkv, heads_, attn_dropout_->p(), training(), attn_dropout_->generator());
  return resid_dropout_->forward(proj_->forward(y));
}

}  // namespace tg::nn
