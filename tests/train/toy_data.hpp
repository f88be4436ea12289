// The toy corpus as language-model data, loaded once per test program.
#pragma once

#include "text/lm_data.hpp"

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

}  // namespace tg::testing
