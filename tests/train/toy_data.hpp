// The toy corpus as language-model data, loaded once per test program, and the tiny model
// shape the training tests run on it.
#pragma once

#include "text/lm_data.hpp"
#include "train/config.hpp"

namespace tg::testing {

inline const text::LMData& toy_data() {
  static const text::LMData data = [] {
    text::LMDataOptions o;
    o.corpus_file = TAPEGRAD_FIXTURES "/toy_corpus.txt";
    o.min_count = 2;
    return text::load_lm_data(o);
  }();
  return data;
}

// A one-layer GPT of width 16 (context 16) or an NPLM with n = 3 and 16 hidden units.
inline train::ModelConfig tiny_model(const std::string& name) {
  train::ModelConfig m;
  m.name = name;
  m.d_model = 16;
  m.layers = 1;
  m.heads = 2;
  m.context = 16;
  m.ngram = 3;
  m.hidden = 16;
  return m;
}

}  // namespace tg::testing
