// A small GPT (GPT-2 architecture): token + position embeddings, pre-LN transformer
// blocks, a final layer norm and an output projection that is either its own matrix
// (untied) or the token embedding itself (tied: one parameter, one summed gradient, one
// optimizer state). The blocks' attention, feed-forward and norm (or whole blocks) come from
// config.parts (nn/block.hpp); every part gets GPT-2's initialisation (init_gpt2).
#pragma once

#include <vector>

#include "base/enum_names.hpp"

#include "nn/block.hpp"
#include "nn/language_model.hpp"

namespace tg::nn {

// How the model knows where a token is: GPT-2's learned table added to the token embeddings,
// rotary embeddings of the queries and keys in every attention layer (no table), or nothing
// (causal attention alone, which still tells positions apart by what each token can see).
enum class Positions { learned, rotary, none };
inline constexpr base::NameTable<Positions, 3> kPositionsNames{
    {{Positions::learned, "learned"}, {Positions::rotary, "rotary"}, {Positions::none, "none"}}};

struct GPTConfig {
  size_t vocab = 0;
  size_t context = 64;  // longest sequence (positions)
  size_t d_model = 128;
  size_t layers = 2;
  size_t heads = 4;
  float dropout = 0.0f;
  bool tied = false;
  std::string embedding = "learned";  // a kind of token table (nn/token_table.hpp)
  Positions positions = Positions::learned;
  bool sparse_embedding_grad = true;  // untied token table keeps a row-sparse gradient
  uint64_t seed = 0;
  GPTParts parts;  // empty factories: GPT-2's own
};

// GPT-2's initialisation, by parameter role (nn/module.hpp): weights N(0, 0.02), residual
// projections N(0, 0.02 / sqrt(2 * layers)), biases zero; embeddings and norms are left as
// their layers made them. Draws from `gen` in registration order.
void init_gpt2(const Module& model, size_t layers, Generator& gen);

class GPT : public VocabularyModel {
 public:
  // `pretrained` ([vocab, d_model]) is required for the pretrained embedding modes.
  explicit GPT(const GPTConfig& config, const Tensor& pretrained = Tensor());

  size_t vocab() const override { return config_.vocab; }
  size_t warmup() const override { return 0; }
  size_t max_predictions() const override { return config_.context; }
  Tensor logits(const Ids& inputs) override;
  Tensor loss(const Ids& inputs, const Ids& targets) override;
  bool tied() const override { return config_.tied; }
  const GPTConfig& config() const { return config_; }

 private:
  Tensor features(const Ids& inputs);  // the final layer norm's output, [B, T, C]
  GPTConfig config_;
  std::shared_ptr<Embedding> wpe_;  // null unless positions are learned; wte and lm_head are
                                    // VocabularyModel's table_ and unembedding_
  std::vector<std::shared_ptr<Layer>> blocks_;
  std::shared_ptr<Layer> ln_f_;
  std::shared_ptr<Dropout> drop_;
};

}  // namespace tg::nn
