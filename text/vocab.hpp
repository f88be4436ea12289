// Vocabulary: word <-> id with counts. Rare words map to one <unk> symbol.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/tensor.hpp"
#include "text/corpus.hpp"

namespace tg::text {

class Vocabulary {
 public:
  static constexpr const char* kUnk = "<unk>";

  Vocabulary() = default;
  // Words seen at least min_count times in `counted`, most frequent first (ties by word),
  // after <unk> at id 0. Bengio et al.: frequency <= 3 -> <unk>, i.e. min_count 4.
  static Vocabulary build(const Tokens& counted, size_t min_count);

  size_t size() const { return words_.size(); }
  int32_t unk() const { return 0; }
  int32_t id(const std::string& word) const;  // unk() if unknown
  bool contains(const std::string& word) const { return index_.count(word) > 0; }
  const std::string& word(int32_t id) const;  // throws out_of_range naming the id
  size_t count(int32_t id) const { return counts_.at(static_cast<size_t>(id)); }
  const std::vector<std::string>& words() const { return words_; }

  std::vector<int32_t> encode(const Tokens& tokens) const;

  // Text file: a header line "tapegrad-vocab <size>", then "word<TAB>count" per line,
  // in id order. Written atomically; the reader names the file and line of any problem.
  void save(const std::string& path) const;
  static Vocabulary load(const std::string& path);

 private:
  void add(const std::string& word, size_t count);
  std::vector<std::string> words_;
  std::vector<size_t> counts_;
  std::unordered_map<std::string, int32_t> index_;
};

}  // namespace tg::text
