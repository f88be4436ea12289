// Word vectors in the two formats of the original word2vec tool, which gensim's
// KeyedVectors.load_word2vec_format and the C tool's distance/analogy programs read:
//   text:   "V D\n" then "word x1 x2 ... xD\n" per word
//   binary: "V D\n" then "word " + D little-endian float32 + "\n" per word
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
#include "text/vocab.hpp"

namespace tg::text {

struct WordVectors {
  std::vector<std::string> words;
  Tensor matrix;  // [words.size(), dim]

  size_t dim() const { return matrix.size(1); }
  int find(const std::string& word) const;  // row, or -1
  std::unordered_map<std::string, int> index;
};

enum class VectorFormat { text, binary, autodetect };

void save_vectors(const std::string& path, const std::vector<std::string>& words,
                  const Tensor& matrix, VectorFormat format);
// Rejects, naming file and line (text) or byte offset (binary): a bad header, counts that do
// not match the file, wrong numbers of values, unparsable or non-finite numbers, duplicate
// words, truncation. Sizes are checked against the file size before anything is allocated.
WordVectors load_vectors(const std::string& path, VectorFormat format = VectorFormat::autodetect);

struct AlignStats {
  size_t found = 0, missing = 0;
  float init_std = 0.0f;
};
// A [vocab, dim] table in the vocabulary's id order: rows of words in `vectors` are copied
// (a BPE's tokens looked up by their spelling, Vocabulary::spelling);
// words missing from the file (and <unk> if absent) get N(0, s^2), s the standard deviation of
// all values in the file, so they match the others' scale. Throws if dim differs from `dim`.
Tensor align_to_vocab(const WordVectors& vectors, const Vocabulary& vocab, size_t dim,
                      Generator& gen, AlignStats* stats = nullptr);

}  // namespace tg::text
