// The token streams a language model trains and is evaluated on.
//
// One encoded stream holds the whole corpus; train, valid and test are ranges of it, in that
// order, so an evaluated token's context may reach back into the split before it (every
// token is predicted from real preceding text, never from padding).
#pragma once

#include <string>
#include <vector>

#include "base/enum_names.hpp"
#include "text/corpus.hpp"
#include "text/vocab.hpp"

namespace tg::text {

// Which tokens the word frequencies (for --min-count) are counted on: the whole corpus, as
// Bengio et al. did, or the training split only.
enum class VocabCounts { all, train };
inline constexpr base::NameTable<VocabCounts, 2> kVocabCountsNames{
    {{VocabCounts::all, "all"}, {VocabCounts::train, "train"}}};

struct LMDataOptions {
  std::string corpus = "brown";       // "brown" or "" when corpus_file is set
  std::string corpus_file;            // plain text, whitespace tokens
  std::string split = "0.8,0.1,0.1";  // fractions, for corpus_file
  size_t min_count = 4;               // Bengio et al.: frequency <= 3 -> <unk>
  VocabCounts vocab_counts = VocabCounts::all;
  double train_fraction = 1.0;  // use the first fraction of the training range
  // "word" (whitespace words, rare ones -> <unk>), "gpt2" (GPT-2's byte-level BPE), or a folder
  // or encoder.json of another BPE (text/bpe.hpp, load_bpe). With a BPE, min_count and
  // vocab_counts do not apply: the splits' words are joined by spaces and encoded.
  std::string tokenizer = "word";
};

struct Range {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};

struct LMData {
  Vocabulary vocab;
  std::vector<int32_t> stream;  // the whole corpus, encoded
  Range train, valid, test;     // train is already cut to train_fraction
  size_t train_full = 0;        // tokens of the whole training range
  // Words (whitespace-separated) of the valid and test ranges: per-word perplexity is
  // exp(total NLL / words), one scale across tokenizations. Equal to the tokens for "word".
  size_t valid_words = 0, test_words = 0;
  std::string tokenizer = "word";  // as given; the BPE itself is vocab.bpe()
  std::string description;         // one line for logs
  // The (cut) training range as words (<unk> for rare ones), or as BPE tokens spelled for
  // word-vector files (Vocabulary::spelling): what word2vec trains on for the pretrained modes.
  Tokens train_tokens() const;
};

// The corpus `options` names as words, its three splits (whole: --train-fraction does not
// cut them) and a line naming it. Throws naming an empty corpus or a bad split.
struct CorpusSplits {
  Tokens words;
  Splits splits;
  std::string source;
};
CorpusSplits read_corpus(const LMDataOptions& options);

// Throws with a clear message for an empty corpus, a bad split or fraction.
LMData load_lm_data(const LMDataOptions& options);
// The same from the corpus read_corpus(options) gave, for a caller that needs its words too.
LMData load_lm_data(const LMDataOptions& options, const CorpusSplits& corpus);

// A hash of what a model is trained and evaluated on: the encoded token stream, the split and
// the vocabulary (16 hex digits). Checkpoints and per-token loss files carry it.
std::string fingerprint(const LMData& data);

// How often each token id occurs in the training split.
std::vector<size_t> train_counts(const LMData& data);

}  // namespace tg::text
