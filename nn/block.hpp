// The pre-LN transformer block of GPT-2, x + attn(ln1(x)), then + mlp(ln2(x)), built from
// replaceable parts: a model config carries factories (GPTParts) for the attention, the
// feed-forward, the norm or the whole block, so a user's layer goes in without editing this.
#pragma once

#include <functional>

#include "nn/attention.hpp"
#include "nn/layer_norm.hpp"

namespace tg::nn {

// What a part factory gets to build its layer for block `index` (of `layers`; the final norm
// is built with index == layers).
struct BlockContext {
  size_t d_model, heads, context, index, layers;
  float dropout;
  std::shared_ptr<Generator> dropout_gen;  // shared by the whole model: one seed fixes every mask
  Generator& init;                         // the model's initialisation stream
  bool rotary = false;  // attention rotates its queries and keys (GPTConfig::positions)
};

using LayerFactory = std::function<std::shared_ptr<Layer>(const BlockContext&)>;

// Empty factories mean GPT-2's parts. A Linear that projects back into the residual stream
// should be made with ParamRole::residual_weight so that init_gpt2 scales it.
struct GPTParts {
  LayerFactory attention;  // default: CausalSelfAttention
  LayerFactory mlp;        // default: MLP
  LayerFactory norm;       // default: LayerNorm (ln1, ln2 and the final ln_f)
  LayerFactory block;      // default: TransformerBlock from the three above
};

// GPT-2's feed-forward: Linear(C, 4C) -> GELU -> Linear(4C, C) -> dropout.
class MLP : public Layer {
 public:
  explicit MLP(const BlockContext& ctx);
  Tensor forward(const Tensor& x) const override {
    return dropout_->forward(proj_->forward(gelu(fc_->forward(x))));
  }
  const Linear& fc() const { return *fc_; }
  const Linear& proj() const { return *proj_; }

 private:
  std::shared_ptr<Linear> fc_, proj_;
  std::shared_ptr<Dropout> dropout_;
};

class TransformerBlock : public Layer {
 public:
  TransformerBlock(const BlockContext& ctx, const GPTParts& parts);
  Tensor forward(const Tensor& x) const override;

 private:
  std::shared_ptr<Layer> ln1_, attn_, ln2_, mlp_;
};

// The parts' defaults, for factories that wrap or reuse them.
std::shared_ptr<Layer> make_attention(const BlockContext& ctx, const GPTParts& parts);
std::shared_ptr<Layer> make_mlp(const BlockContext& ctx, const GPTParts& parts);
std::shared_ptr<Layer> make_norm(const BlockContext& ctx, const GPTParts& parts);
std::shared_ptr<Layer> make_block(const BlockContext& ctx, const GPTParts& parts);

}  // namespace tg::nn
