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

}  // namespace tg::text
