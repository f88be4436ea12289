// Everything in nn/, in one include.
#pragma once

#include "nn/attention.hpp"
#include "nn/block.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/gpt.hpp"
#include "nn/language_model.hpp"
#include "nn/layer_norm.hpp"
#include "nn/linear.hpp"
#include "nn/module.hpp"
#include "nn/nplm.hpp"
#include "nn/recurrent.hpp"
#include "nn/rnn_lm.hpp"
#include "nn/token_table.hpp"
