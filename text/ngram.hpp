// Count-based n-gram language models, the baselines of Bengio et al. (2003, Table 1), on the
// same vocabulary, <unk> and token stream as the neural models:
//  * interpolated modified Kneser-Ney (Chen & Goodman 1998), any order >= 2: three absolute
//    discounts per order from the counts of counts, continuation counts below the top order,
//    and a uniform distribution under the unigrams, so every word has a probability;
//  * deleted interpolation (Jelinek & Mercer 1980): maximum-likelihood estimates of orders
//    1..n and the uniform distribution mixed with weights fitted by EM on held-out text, one
//    set of weights per power-of-two bucket of the longest context's count.
// Contexts come from the continuous stream (at most order - 1 tokens before the predicted
// one, fewer at the very start), as the neural models' do.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/enum_names.hpp"
#include "text/lm_data.hpp"

namespace tg::text {

enum class NgramSmoothing { kneser_ney, jelinek_mercer };
inline constexpr base::NameTable<NgramSmoothing, 2> kNgramSmoothingNames{
    {{NgramSmoothing::kneser_ney, "kneser-ney"},
     {NgramSmoothing::jelinek_mercer, "jelinek-mercer"}}};

class NgramModel {
 public:
  virtual ~NgramModel() = default;
  // P(word | context), where context holds the preceding ids, oldest first; only the last
  // order() - 1 are used. Sums to 1 over the vocabulary for any context.
  virtual double prob(const int32_t* context, size_t context_size, int32_t word) const = 0;
  virtual size_t order() const = 0;
  virtual size_t vocab() const = 0;
};

// Counts the n-grams of stream[range] (ids below `vocab`, at most 2^21 words).
std::unique_ptr<NgramModel> train_kneser_ney(const std::vector<int32_t>& stream, Range range,
                                             size_t vocab, size_t order);
// Counts on `train`, then fits the mixture weights by EM on `held_out` (Range of the same stream).
std::unique_ptr<NgramModel> train_jelinek_mercer(const std::vector<int32_t>& stream, Range train,
                                                 Range held_out, size_t vocab, size_t order);

// Mean negative log-likelihood (nats) of every token of `range`, each predicted once from the
// tokens before it in the stream (which may lie in the split before).
double ngram_nll(const NgramModel& model, const std::vector<int32_t>& stream, Range range);
// The same, token by token.
std::vector<double> ngram_token_nll(const NgramModel& model, const std::vector<int32_t>& stream,
                                    Range range);

// Two models' per-token losses on the same tokens, mixed as p = w p_a + (1 - w) p_b: the mean
// loss of the mixture, and the weight w that minimises it (EM, to 1e-10).
double mixture_nll(const std::vector<double>& nll_a, const std::vector<double>& nll_b,
                   double weight_a);
double fit_mixture_weight(const std::vector<double>& nll_a, const std::vector<double>& nll_b);

// Open vocabulary for a word-level model: what spelling out the words it maps to <unk> costs.
// A byte-level Kneser-Ney model of `order`, counted on the training words that the vocabulary
// maps to <unk> (each occurrence's bytes, then an end-of-word symbol, in one stream), gives each
// <unk> of the validation and test words the probability of its spelling. p(word) = p(<unk>)
// p(spelling) then spreads a word model's <unk> over every word, as a subword model must: the
// spelling's -log p is what a word model's per-word loss leaves out. The speller gives some of
// its mass to in-vocabulary words too, so the cost is an upper bound.
struct SpellingCost {
  size_t unk = 0;      // words of the split that the vocabulary maps to <unk>
  size_t bytes = 0;    // their bytes, end-of-word symbols not counted
  double nll_sum = 0;  // nats: -log p of each spelling, its end-of-word included, summed
};
struct UnkSpelling {
  size_t order = 0;
  size_t train_unk = 0;  // the spellings the speller was counted on
  SpellingCost valid, test;
};
// Nothing when no training word maps to <unk> (there is nothing to count a speller on). Throws
// for a BPE's vocabulary, which has no <unk>.
std::optional<UnkSpelling> spell_unknown_words(const Tokens& train, const Tokens& valid,
                                               const Tokens& test, const Vocabulary& vocab,
                                               size_t order);

}  // namespace tg::text
