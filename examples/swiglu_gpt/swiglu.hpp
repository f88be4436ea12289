// A new op and a new layer, written outside the library, and a GPT that uses them, trained
// by the library's own programs (docs/extending.md walks through this file).
//   silu(x) = x * sigmoid(x)                       the op: forward and backward
//   SwiGLU(x) = W2 (silu(W1 x) * W3 x)             the layer (Shazeer 2020; LLaMA's feed-forward)
//   "swiglu-gpt": GPT-2 with SwiGLU in place of its GELU MLP, registered by name
#pragma once

#include <cmath>

#include "nn/block.hpp"
#include "train/models.hpp"

// BEGIN DOC EXAMPLE
namespace swiglu {

using namespace tg;

// The op: compute the output; only if an input needs a gradient, record the backward.
inline Tensor silu(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape());
  for (size_t i = 0; i < x.numel(); ++i)
    out.data()[i] = x.data()[i] / (1.0f + std::exp(-x.data()[i]));
  if (!needs_grad({&x})) return out;
  record("silu", {x}, out, [x, out = out.without_data()]() {  // reads x, not out
    const float* g = out.grad().data();
    float* gx = x.grad_data();
    for (size_t i = 0; i < x.numel(); ++i) {
      const float s = 1.0f / (1.0f + std::exp(-x.data()[i]));
      gx[i] += g[i] * s * (1.0f + x.data()[i] * (1.0f - s));  // d/dx x s(x) = s (1 + x (1 - s))
    }
  });
  return out;
}

// The layer: a GPT block's feed-forward (nn::Layer), built from the block's context.
class SwiGLU : public nn::Layer {
 public:
  SwiGLU(const nn::BlockContext& ctx, size_t hidden) {
    w1_ = register_module("w1", std::make_shared<nn::Linear>(ctx.d_model, hidden, ctx.init,
                                                             nn::LinearOptions{.bias = false}));
    w3_ = register_module("w3", std::make_shared<nn::Linear>(ctx.d_model, hidden, ctx.init,
                                                             nn::LinearOptions{.bias = false}));
    // Projects back into the residual stream: GPT-2's initialisation scales it by depth.
    w2_ = register_module(
        "w2", std::make_shared<nn::Linear>(
                  hidden, ctx.d_model, ctx.init,
                  nn::LinearOptions{.bias = false, .role = nn::ParamRole::residual_weight}));
    dropout_ =
        register_module("dropout", std::make_shared<nn::Dropout>(ctx.dropout, ctx.dropout_gen));
  }
  Tensor forward(const Tensor& x) const override {
    return dropout_->forward(w2_->forward(silu(w1_->forward(x)) * w3_->forward(x)));
  }

 private:
  std::shared_ptr<nn::Linear> w1_, w2_, w3_;
  std::shared_ptr<nn::Dropout> dropout_;
};

// Registers "swiglu-gpt": the library's GPT with SwiGLU feed-forwards. Hidden width
// 8/3 d_model rounded up to a multiple of 8 (the same parameter count as GPT-2's 4 d_model
// MLP), or --model-option hidden=N.
inline void register_swiglu_gpt() {
  train::register_model(
      "swiglu-gpt",
      [](const train::ModelSpec& spec) -> std::unique_ptr<nn::LanguageModel> {
        nn::GPTConfig config = train::gpt_config(spec);
        const auto& options = spec.config.options;
        const size_t hidden = options.count("hidden") ? std::stoul(options.at("hidden"))
                                                      : (8 * config.d_model / 3 + 7) / 8 * 8;
        config.parts.mlp = [hidden](const nn::BlockContext& ctx) {
          return std::make_shared<SwiGLU>(ctx, hidden);
        };
        return std::make_unique<nn::GPT>(config, spec.pretrained);
      },
      "GPT with SwiGLU feed-forwards");
}

}  // namespace swiglu
// END DOC EXAMPLE
