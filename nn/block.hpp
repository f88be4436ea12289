// The pre-LN transformer block of GPT-2: x + attn(ln1(x)), then + mlp(ln2(x)), where the
// MLP is Linear(C, 4C) -> GELU -> Linear(4C, C) -> dropout.
#pragma once

#include "nn/attention.hpp"
#include "nn/layer_norm.hpp"

namespace tg::nn {

class MLP : public Module {
 public:
  MLP(size_t d_model, float dropout, std::shared_ptr<Generator> dropout_gen, Generator& init);
  Tensor forward(const Tensor& x) const {
    return dropout_->forward(proj_->forward(gelu(fc_->forward(x))));
  }
  const Linear& fc() const { return *fc_; }
  const Linear& proj() const { return *proj_; }

 private:
  std::shared_ptr<Linear> fc_, proj_;
  std::shared_ptr<Dropout> dropout_;
};

class TransformerBlock : public Module {
 public:
  TransformerBlock(size_t d_model, size_t heads, float dropout,
                   std::shared_ptr<Generator> dropout_gen, Generator& init);
  Tensor forward(const Tensor& x) const;

 private:
  std::shared_ptr<LayerNorm> ln1_, ln2_;
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<MLP> mlp_;
};

}  // namespace tg::nn
