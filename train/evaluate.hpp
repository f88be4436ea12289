// Evaluation and sampling for any next-word model (nn/language_model.hpp).
#pragma once

#include <string>
#include <vector>

#include "nn/language_model.hpp"
#include "text/lm_data.hpp"

namespace tg::train {

// Mean negative log-likelihood per token over the targets in `range` (each predicted once,
// from real preceding context, which may reach into the split before), under NoGrad. Under
// MPI the batches are split over the ranks and the sums added up.
double evaluate_nll(nn::LanguageModel& model, const text::LMData& data, const text::Range& range,
                    size_t batch_rows);

// The negative log-likelihood of each target in `range`, in order: the same predictions as
// evaluate_nll, from the full logits. What per-token comparisons need (a block bootstrap over
// the test split, a mixture with an n-gram model).
std::vector<double> token_nll(nn::LanguageModel& model, const text::LMData& data,
                              const text::Range& range, size_t batch_rows);

// Generates `count` tokens after `prompt` (whitespace-separated words) with temperature and
// top-k (0 = all), recording no tape.
std::string sample_text(nn::LanguageModel& model, const text::Vocabulary& vocab,
                        const std::string& prompt, size_t count, float temperature, size_t top_k,
                        uint64_t seed);

}  // namespace tg::train
