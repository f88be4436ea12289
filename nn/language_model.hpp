// What the training loop, the evaluator and the experiments need from a next-word model.
//
// A model sees `warmup() + T` input tokens and predicts the token after each of the last T:
// logits has shape [B, T, V] and targets[b, t] is the token that follows
// inputs[b, warmup() + t]. GPT needs no warm-up (position t sees tokens 0..t); the NPLM
// needs its n-2 extra tokens of left context so that every prediction sees n-1 words.
#pragma once

#include "nn/embedding.hpp"
#include "nn/embedding_mode.hpp"

namespace tg::nn {

class LanguageModel : public Module {
 public:
  virtual size_t vocab() const = 0;
  virtual size_t warmup() const = 0;
  virtual size_t max_predictions() const = 0;    // the largest T one call accepts
  virtual Tensor logits(const Ids& inputs) = 0;  // [B, warmup + T] -> [B, T, V]
  // Mean cross-entropy of the next-token predictions. Models whose output layer is one linear
  // map override it with the fused linear_cross_entropy (same value, no [B, T, V] logits).
  virtual Tensor loss(const Ids& inputs, const Ids& targets) {
    return cross_entropy(logits(inputs), targets);
  }

  virtual const Embedding& input_embedding() const = 0;
  virtual Tensor output_matrix() const = 0;  // [V, width]: the embedding itself when tied
  virtual bool tied() const = 0;
  virtual Generator& dropout_generator() = 0;
};

}  // namespace tg::nn
