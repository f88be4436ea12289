// Causal multi-head self-attention with a fused QKV projection:
//   q, k, v = split(x Wqkv^T + bqkv);  per head: softmax(q k^T / sqrt(d) + causal) v;
//   heads concatenated, then an output projection. With `rotary`, q and k are rotated by
//   their positions first (rotary_qk), so the model needs no position table.
#pragma once

#include "nn/dropout.hpp"
#include "nn/linear.hpp"

namespace tg::nn {

class CausalSelfAttention : public Layer {
 public:
  CausalSelfAttention(size_t d_model, size_t heads, float dropout,
                      std::shared_ptr<Generator> dropout_gen, Generator& init, bool rotary = false);
  Tensor forward(const Tensor& x) const override;  // [B, T, C] -> [B, T, C]

  const Linear& qkv() const { return *qkv_; }
  const Linear& proj() const { return *proj_; }

 private:
  size_t d_model_, heads_;
  bool rotary_;
  std::shared_ptr<Linear> qkv_, proj_;
  std::shared_ptr<Dropout> attn_dropout_, resid_dropout_;
};

}  // namespace tg::nn
