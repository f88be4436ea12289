// word2vec (Mikolov et al. 2013): skip-gram and CBOW with negative sampling, as in the
// original C tool: unigram^0.75 negatives, sub-sampling of frequent words, a linearly
// decaying learning rate, a dynamic window, and lock-free (Hogwild) updates across threads.
// With one thread and a seed the result is deterministic.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
#include "text/corpus.hpp"

namespace tg::text {

struct Word2VecOptions {
  size_t size = 100;     // vector dimension
  size_t window = 5;     // max distance; each position draws its own window in [1, window]
  size_t negative = 5;   // negative samples per positive pair
  double sample = 1e-3;  // sub-sampling threshold (0: off)
  size_t iter = 5;       // epochs
  size_t min_count = 5;  // words rarer than this are dropped
  float alpha = -1.0f;   // starting learning rate; -1: 0.05 for CBOW, 0.025 for skip-gram
  bool cbow = true;      // the original's default; false = skip-gram
  size_t threads = 1;
  uint64_t seed = 1;
};

struct Word2VecProgress {
  double fraction;     // of all epochs
  float alpha;         // current learning rate
  double words_per_s;  // raw corpus words per second so far
  double elapsed_s;
};

struct Word2VecResult {
  std::vector<std::string> words;  // most frequent first
  std::vector<size_t> counts;
  Tensor input;             // [V, size]: the word vectors (syn0)
  Tensor output;            // [V, size]: the negative-sampling output vectors (syn1neg)
  size_t corpus_words = 0;  // tokens in vocabulary, per epoch
  double seconds = 0.0;
  double words_per_s = 0.0;  // corpus_words * iter / seconds
};

// Trains on a token stream (split into 1000-word sentences, as the original does for text
// without line breaks). `progress` is called from one thread about ten times a second.
Word2VecResult train_word2vec(const Tokens& tokens, const Word2VecOptions& options,
                              const std::function<void(const Word2VecProgress&)>& progress = {});

// Pieces exposed for tests -------------------------------------------------------------------

// Walker's alias method over weights proportional to count^power: O(1) draws.
class UnigramSampler {
 public:
  UnigramSampler(const std::vector<size_t>& counts, double power = 0.75);
  uint32_t draw(uint64_t random) const;  // random: 64 uniform bits
  double probability(uint32_t word) const { return probability_[word]; }

 private:
  std::vector<double> probability_;
  std::vector<float> threshold_;
  std::vector<uint32_t> alias_;
};

// The original's keep probability for a word of `count` in a corpus of `total` words.
double keep_probability(size_t count, size_t total, double sample);

// One skip-gram negative-sampling update for (center, context) with the given negatives, on
// rows of `input` (the context word's vector) and `output`; returns the loss
// -log s(u_c . v) - sum log s(-u_n . v) before the update. Exposed so that a test can compare
// its gradient with what the autograd engine computes for the same loss.
float sgns_update(float* input_row, float* const* output_rows, const int* labels, size_t rows,
                  size_t dim, float alpha, float* scratch);

}  // namespace tg::text
