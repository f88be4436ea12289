// Evaluating word vectors: nearest neighbours, word-pair similarity (WordSim-353,
// SimLex-999) and analogies (Google's questions-words), reported as gensim reports them.
#pragma once

#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace tg::text {

// Unit-length rows and a case-insensitive index (a lower-cased word maps to its first, i.e.
// most frequent, row), like gensim's case_insensitive=True.
class VectorIndex {
 public:
  VectorIndex(std::vector<std::string> words, const Tensor& matrix);
  int find(const std::string& word, bool case_insensitive = true) const;  // row or -1
  float cosine(int a, int b) const;
  // The k rows most similar to `query` (a vector of the same dimension), skipping `exclude`.
  std::vector<std::pair<int, float>> nearest(const float* query, size_t k,
                                             const std::vector<int>& exclude = {}) const;
  const std::string& word(int row) const { return words_[static_cast<size_t>(row)]; }
  size_t size() const { return words_.size(); }
  size_t dim() const { return dim_; }
  const float* row(int r) const { return unit_.data() + static_cast<size_t>(r) * dim_; }

 private:
  std::vector<std::string> words_;
  std::vector<float> unit_;
  size_t dim_;
  std::vector<std::pair<std::string, int>> lower_;  // sorted
  std::vector<std::pair<std::string, int>> exact_;  // sorted
};

struct SimilarityScore {
  // A rank correlation over fewer pairs says nothing (two pairs give +-1): below this many pairs
  // with both words known, spearman is NaN (null in JSON, "n/a" in print).
  static constexpr size_t kMinPairs = 10;
  double spearman = 0.0;
  size_t pairs = 0, used = 0;  // in the file / with both words known
  bool measured() const { return used >= kMinPairs; }
  double oov_ratio() const {
    return pairs ? 1.0 - static_cast<double>(used) / static_cast<double>(pairs) : 0.0;
  }
};
// File: "word1<TAB>word2<TAB>score" lines, '#' comments. Throws naming file and line.
SimilarityScore evaluate_similarity(const VectorIndex& index, const std::string& path);

// Vectors whose rows are byte-level BPE tokens named by their spelling (Vocabulary::spelling,
// "Ġtiger"), renamed for a word-similarity test: a token that is a space and then a word is
// named by the word ("tiger"), as the word reads in running text; any other token by "##" and
// its spelling (a piece of a word), which answers for no word. A word that GPT-2 splits into
// several tokens is then out of vocabulary, as a rare word is for a word-level table.
std::vector<std::string> word_names_of_subwords(const std::vector<std::string>& spellings);

struct AnalogyScore {
  double accuracy = 0.0;
  size_t questions = 0, used = 0;  // in the file / with all four words known
};
// 3CosAdd over the `restrict_vocab` most frequent rows (gensim: 300,000), excluding the three
// question words. File: ": section" headers and "a b c d" lines.
AnalogyScore evaluate_analogies(const VectorIndex& index, const std::string& path,
                                size_t restrict_vocab = 300000);

double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace tg::text
