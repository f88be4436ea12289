// Evaluation and sampling for any next-word model (nn/language_model.hpp).
#pragma once

#include <string>

#include "nn/language_model.hpp"
#include "text/lm_data.hpp"

namespace tg::train {

// Mean negative log-likelihood per token over the targets in `range` (each predicted once,
// from real preceding context, which may reach into the split before), under NoGrad. Under
// MPI the batches are split over the ranks and the sums added up.
double evaluate_nll(nn::LanguageModel& model, const text::LMData& data, const text::Range& range,
                    size_t batch_rows);

// Generates `count` tokens after `prompt` (whitespace-separated words) with temperature and
// top-k (0 = all), recording no tape.
std::string sample_text(nn::LanguageModel& model, const text::Vocabulary& vocab,
                        const std::string& prompt, size_t count, float temperature, size_t top_k,
                        uint64_t seed);

}  // namespace tg::train
