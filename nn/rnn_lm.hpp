// A recurrent language model, PyTorch's word_language_model example:
//   x = dropout(C(w))  ->  `layers` LSTM (or GRU) layers, dropout after each  ->  U h + b
// Tied: U is the embedding table C itself, which needs hidden == d_model.
// The model predicts from its first input token on (no warm-up), like the GPT. With
// carry_state, loss() in training mode starts from the state the previous call ended in (cut
// from the tape) when the batch has as many rows: truncated backpropagation through time over
// the trainer's streams; in evaluation, loss() and logits() do so while
// carry_in_evaluation(true) (train/evaluate.cpp's streamed evaluation). Otherwise a call
// starts from zeros.
#pragma once

#include "base/enum_names.hpp"
#include "nn/dropout.hpp"
#include "nn/language_model.hpp"
#include "nn/linear.hpp"
#include "nn/recurrent.hpp"

namespace tg::nn {

enum class RecurrentCell { lstm, gru };
inline constexpr base::NameTable<RecurrentCell, 2> kRecurrentCellNames{
    {{RecurrentCell::lstm, "lstm"}, {RecurrentCell::gru, "gru"}}};

struct RNNLMConfig {
  size_t vocab = 0;
  RecurrentCell cell = RecurrentCell::lstm;
  size_t d_model = 128;  // embedding width
  size_t hidden = 128;   // each layer's state width
  size_t layers = 1;
  float dropout = 0.0f;  // on the embeddings and after each layer
  bool tied = false;
  size_t max_predictions = 4096;      // T per call
  std::string embedding = "learned";  // a kind of token table (nn/token_table.hpp)
  float init_std = 0.1f;              // the random table's N(0, init_std^2)
  bool carry_state = false;
  uint64_t seed = 0;
};

class RNNLM : public VocabularyModel {
 public:
  explicit RNNLM(const RNNLMConfig& config, const Tensor& pretrained = Tensor());

  size_t vocab() const override { return config_.vocab; }
  size_t warmup() const override { return 0; }
  size_t max_predictions() const override { return config_.max_predictions; }
  Tensor logits(const Ids& inputs) override;
  Tensor loss(const Ids& inputs, const Ids& targets) override;
  bool tied() const override { return config_.tied; }
  bool carries_state() const override { return config_.carry_state; }
  void reset_state() override { carried_.clear(); }
  void carry_in_evaluation(bool on) override { carry_in_evaluation_ = on; }
  std::vector<Tensor> carried_state() const override;
  void set_carried_state(const std::vector<Tensor>& state) override;
  const RNNLMConfig& config() const { return config_; }

  // The last layer's outputs [B, T, hidden] for inputs [B, T], starting from `state` (one per
  // layer; empty for zeros), and the state after the last token, one per layer.
  std::pair<Tensor, std::vector<RecurrentState>> forward(
      const Ids& inputs, const std::vector<RecurrentState>& state = {});

 private:
  RNNLMConfig config_;
  std::vector<std::shared_ptr<RecurrentLayer>> layers_;  // C and U are VocabularyModel's
  Tensor output_bias_;                                   // b
  std::shared_ptr<Dropout> dropout_;
  std::vector<RecurrentState> carried_;  // one per layer; empty: zeros
  bool carry_in_evaluation_ = false;
  // The top layer's outputs [B, T, hidden]; with `carry`, from the carried state (when its
  // rows match), keeping the state they end in, detached.
  Tensor hidden_carrying(const Ids& inputs, bool carry);
};

}  // namespace tg::nn
