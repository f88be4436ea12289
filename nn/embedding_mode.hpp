// How a language model gets its input embedding table: the variable of the experiments.
#pragma once

#include <string>

#include "autograd/tensor.hpp"
#include "base/enum_names.hpp"

namespace tg::nn {

using tg::to_string;  // shapes; the overload below would hide it

enum class EmbeddingMode {
  learned,              // random init, trained end to end (GPT-style)
  frozen_random,        // random init, never trained: the control
  frozen_pretrained,    // loaded (word2vec), never trained
  finetune_pretrained,  // loaded, then trained end to end
};

inline bool is_pretrained(EmbeddingMode m) {
  return m == EmbeddingMode::frozen_pretrained || m == EmbeddingMode::finetune_pretrained;
}
inline bool is_frozen(EmbeddingMode m) {
  return m == EmbeddingMode::frozen_random || m == EmbeddingMode::frozen_pretrained;
}

inline constexpr base::NameTable<EmbeddingMode, 4> kEmbeddingModeNames{
    {{EmbeddingMode::learned, "learned"},
     {EmbeddingMode::frozen_random, "frozen-random"},
     {EmbeddingMode::frozen_pretrained, "frozen-pretrained"},
     {EmbeddingMode::finetune_pretrained, "finetune-pretrained"}}};

inline std::string to_string(EmbeddingMode m) {
  return base::name_of(kEmbeddingModeNames, m);
}
inline EmbeddingMode parse_embedding_mode(const std::string& s) {
  return base::parse_name(kEmbeddingModeNames, s, "embedding mode");
}

}  // namespace tg::nn
