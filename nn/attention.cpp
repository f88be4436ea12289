#include "nn/attention.hpp"

#include <cmath>

namespace tg::nn {

CausalSelfAttention::CausalSelfAttention(size_t d_model, size_t heads, float dropout,
                                         std::shared_ptr<Generator> dropout_gen, Generator& init)
    : d_model_(d_model), heads_(heads) {
  if (heads == 0 || d_model % heads != 0)
    throw std::invalid_argument("CausalSelfAttention: d_model " + std::to_string(d_model) +
                                " is not divisible by " + std::to_string(heads) + " heads");
  qkv_ = register_module("qkv", std::make_shared<Linear>(d_model, 3 * d_model, init));
  proj_ = register_module("proj", std::make_shared<Linear>(d_model, d_model, init));
  attn_dropout_ = register_module("attn_dropout", std::make_shared<Dropout>(dropout, dropout_gen));
  resid_dropout_ = register_module("resid_dropout", std::make_shared<Dropout>(dropout, dropout_gen));
}

Tensor CausalSelfAttention::forward(const Tensor& x) const {
  if (x.dim() != 3 || x.size(2) != d_model_)
    throw std::invalid_argument("CausalSelfAttention: input " + to_string(x.shape()) +
                                " should be [B, T, " + std::to_string(d_model_) + "]");
  const long b = static_cast<long>(x.size(0)), t = static_cast<long>(x.size(1));
  const long c = static_cast<long>(d_model_), h = static_cast<long>(heads_), d = c / h;
  const Tensor qkv = qkv_->forward(x);  // [B, T, 3C]
  auto heads = [&](size_t part) {       // [B, T, C] slice -> [B, H, T, D]
    return permute(reshape(narrow(qkv, 2, part * d_model_, d_model_), {b, t, h, d}), {0, 2, 1, 3});
  };
  const Tensor q = heads(0), k = heads(1), v = heads(2);
  Tensor scores = matmul(q, transpose(k, -2, -1)) * (1.0f / std::sqrt(static_cast<float>(d)));
  Tensor att = attn_dropout_->forward(softmax(causal_mask(scores), -1));
  Tensor y = reshape(permute(matmul(att, v), {0, 2, 1, 3}), {b, t, c});
  return resid_dropout_->forward(proj_->forward(y));
}

}  // namespace tg::nn
