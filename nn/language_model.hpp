// What the training loop, the evaluator and the experiments need from a next-word model.
//
// A model sees `warmup() + T` input tokens and predicts the token after each of the last T:
// logits has shape [B, T, V] and targets[b, t] is the token that follows
// inputs[b, warmup() + t]. GPT needs no warm-up (position t sees tokens 0..t); the NPLM
// needs its n-2 extra tokens of left context so that every prediction sees n-1 words.
#pragma once

#include "nn/embedding.hpp"
#include "nn/linear.hpp"
#include "nn/token_table.hpp"

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

  // A model that carries its state from one training step to the next (a recurrent one,
  // trained by truncated backpropagation through time) says so: the trainer then hands batch
  // row r the r-th of `batch` contiguous streams, window after window
  // (train::BatchOrder::streams), calls reset_state() where the streams start, and keeps the
  // state in checkpoints. In training mode loss() carries it; in evaluation mode loss() and
  // logits() carry it only while carry_in_evaluation(true) (train/evaluate.cpp reads the split
  // as contiguous streams then), else each call starts afresh.
  virtual bool carries_state() const { return false; }
  virtual void reset_state() {}
  virtual void carry_in_evaluation(bool /*on*/) {}
  // The carried state as tensors of [rows, width] (empty before the first step), and back.
  virtual std::vector<Tensor> carried_state() const { return {}; }
  virtual void set_carried_state(const std::vector<Tensor>& /*state*/) {}

  virtual const TokenTable& input_embedding() const = 0;
  virtual Tensor output_matrix() const = 0;  // [V, width]: the embedding itself when tied
  virtual bool tied() const = 0;
  virtual Generator& dropout_generator() = 0;
};

// What the built-in models share: a token table, an output matrix onto the vocabulary (the
// table itself when tied) and one dropout generator for every mask. A subclass registers the
// modules under its own names and keeps them here.
class VocabularyModel : public LanguageModel {
 public:
  const TokenTable& input_embedding() const override { return *table_; }
  Tensor output_matrix() const override {
    return tied() ? table_->weight() : unembedding_->weight();
  }
  Generator& dropout_generator() override { return *dropout_gen_; }

 protected:
  std::shared_ptr<Generator> dropout_gen_;
  std::shared_ptr<TokenTable> table_;
  std::shared_ptr<Linear> unembedding_;  // null when tied
};

// A model whose output matrix, tied, is its token table needs `width` (what it projects onto
// the vocabulary) to equal d_model; throws naming both otherwise.
inline void check_tied_width(const std::string& model, bool tied, size_t width, size_t d_model) {
  if (tied && width != d_model)
    throw std::invalid_argument(
        model + ": a tied output matrix is the embedding table, so hidden (" +
        std::to_string(width) + ") must equal d_model (" + std::to_string(d_model) + ")");
}

// A tied output matrix is the token table's rows: a kind whose rows are not [vocab, d_model]
// (a factorized table) cannot be tied; throws naming the kind.
inline void check_tie(const std::string& kind, bool tied) {
  if (tied && !table_kind(kind).can_tie)
    throw std::invalid_argument("the token table '" + kind +
                                "' cannot be tied: its rows are not the output's [vocab, d_model]");
}

}  // namespace tg::nn
