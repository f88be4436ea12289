// The tiny models of tests/reference/make_golden_nn.py, built in C++ with the golden
// parameters loaded by name.
#pragma once

#include <memory>
#include <string>

#include "nn/nn.hpp"

namespace tg::testing {

const TensorFile& golden_models();
// Builds the model of case `name` (gpt_untied, gpt_tied, nplm_direct, nplm_tied, lstm_untied
// with two layers, gru_tied with one) and copies
// the golden parameters into it; throws if the model's parameter names differ from the file's.
std::unique_ptr<nn::LanguageModel> golden_model(const std::string& name);

}  // namespace tg::testing
