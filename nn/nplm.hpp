// The neural probabilistic language model of Bengio, Ducharme, Vincent and Jauvin (2003):
//   x = [C(w_{t-n+1}), ..., C(w_{t-1})]            (n-1 embeddings concatenated)
//   y = b + W x + U tanh(d + H x)                   (W: optional direct connections)
//   P(w_t | context) = softmax(y)
// Tied: U is the embedding table C itself, which needs hidden == d_model.
#pragma once

#include "nn/dropout.hpp"
#include "nn/language_model.hpp"
#include "nn/linear.hpp"

namespace tg::nn {

struct NPLMConfig {
  size_t vocab = 0;
  size_t ngram = 5;     // n: predicts from the n-1 previous words
  size_t d_model = 60;  // m, the embedding width
  size_t hidden = 50;   // h
  bool direct = false;  // W, the direct input-to-output connections
  bool tied = false;
  float dropout = 0.0f;               // on the hidden layer
  size_t max_predictions = 4096;      // T per call
  std::string embedding = "learned";  // a kind of token table (nn/token_table.hpp)
  bool sparse_embedding_grad = true;
  uint64_t seed = 0;
};

class NPLM : public VocabularyModel {
 public:
  explicit NPLM(const NPLMConfig& config, const Tensor& pretrained = Tensor());

  size_t vocab() const override { return config_.vocab; }
  size_t warmup() const override { return config_.ngram - 2; }
  size_t max_predictions() const override { return config_.max_predictions; }
  Tensor logits(const Ids& inputs) override;
  Tensor loss(const Ids& inputs, const Ids& targets) override;
  bool tied() const override { return config_.tied; }
  const NPLMConfig& config() const { return config_; }

 private:
  // The hidden layer's output h ([B*T, hidden]) and the inputs x ([B*T, (n-1) d]).
  std::pair<Tensor, Tensor> features(const Ids& inputs);
  NPLMConfig config_;
  std::shared_ptr<Linear> hidden_;  // H, d; C and U are VocabularyModel's
  std::shared_ptr<Linear> direct_;  // W (null without direct connections)
  Tensor output_bias_;              // b
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace tg::nn
