// How a language model gets its input embedding table: the variable of the experiments.
#pragma once

#include <stdexcept>
#include <string>

#include "autograd/tensor.hpp"

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

inline std::string to_string(EmbeddingMode m) {
  switch (m) {
    case EmbeddingMode::learned: return "learned";
    case EmbeddingMode::frozen_random: return "frozen-random";
    case EmbeddingMode::frozen_pretrained: return "frozen-pretrained";
    case EmbeddingMode::finetune_pretrained: return "finetune-pretrained";
  }
  return "?";
}

inline EmbeddingMode parse_embedding_mode(const std::string& s) {
  for (auto m : {EmbeddingMode::learned, EmbeddingMode::frozen_random,
                 EmbeddingMode::frozen_pretrained, EmbeddingMode::finetune_pretrained})
    if (to_string(m) == s) return m;
  throw std::invalid_argument("unknown embedding mode '" + s +
                              "' (use learned, frozen-random, frozen-pretrained or finetune-pretrained)");
}

}  // namespace tg::nn
