// Vocabulary: word <-> id with counts. Rare words map to one <unk> symbol.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/tensor.hpp"
#include "text/corpus.hpp"

namespace tg::text {

class BytePairEncoding;

// Either words (Bengio et al.'s protocol: rare words -> <unk>, id 0) or the tokens of a
// byte-level BPE (text/bpe.hpp: every byte string encodes, no <unk>).
class Vocabulary {
 public:
  static constexpr const char* kUnk = "<unk>";

  Vocabulary() = default;
  // Words seen at least min_count times in `counted`, most frequent first (ties by word),
  // after <unk> at id 0. Bengio et al.: frequency <= 3 -> <unk>, i.e. min_count 4.
  static Vocabulary build(const Tokens& counted, size_t min_count);
  // A BPE's tokens in id order, with how often each occurs in `counted` (ids).
  static Vocabulary from_bpe(std::shared_ptr<const BytePairEncoding> bpe,
                             const std::vector<int32_t>& counted);

  size_t size() const { return words_.size(); }
  int32_t unk() const { return bpe_ ? -1 : 0; }  // -1: a BPE has none
  int32_t id(const std::string& word) const;     // unk() if unknown
  const BytePairEncoding* bpe() const { return bpe_.get(); }
  bool contains(const std::string& word) const { return index_.count(word) > 0; }
  const std::string& word(int32_t id) const;  // throws out_of_range naming the id
  // The id's name in word-vector files (word2vec's format: names free of white space): the word,
  // or a BPE token as GPT-2's files write it (gpt2_written: " the" -> "Ġthe").
  std::string spelling(int32_t id) const;
  size_t count(int32_t id) const { return counts_.at(static_cast<size_t>(id)); }
  const std::vector<std::string>& words() const { return words_; }

  std::vector<int32_t> encode(const Tokens& tokens) const;
  // Text as a program's user types it (a prompt): its whitespace-separated words, or its bytes
  // through the BPE.
  std::vector<int32_t> encode_text(const std::string& text) const;
  // Appends token `id` to generated text: " word", or the token's bytes.
  void append(std::string& text, int32_t id) const;

  // Text file: a header line "tapegrad-vocab <size>", then "word<TAB>count" per line,
  // in id order. Written atomically; the reader names the file and line of any problem.
  void save(const std::string& path) const;
  static Vocabulary load(const std::string& path);

 private:
  void add(const std::string& word, size_t count);
  std::vector<std::string> words_;
  std::vector<size_t> counts_;
  std::unordered_map<std::string, int32_t> index_;
  std::shared_ptr<const BytePairEncoding> bpe_;
};

}  // namespace tg::text
