// LSTM and GRU layers, one layer each, batch first: x [B, T, input] -> outputs [B, T, hidden]
// and the state after the last step. Parameters, gate order and initialisation are PyTorch's
// (torch.nn.LSTM / torch.nn.GRU with batch_first=True): weight_ih [G * hidden, input],
// weight_hh [G * hidden, hidden], bias_ih and bias_hh [G * hidden], every one uniform in
// +-1/sqrt(hidden); gates LSTM i, f, g, o (G = 4) and GRU r, z, n (G = 3). Stack layers by
// feeding one's outputs to the next.
//
// The input projection of all T steps is one matrix product; each step then adds h W_hh^T and
// applies the gates with the element-wise ops, so the backward pass is the composed ops' own.
#pragma once

#include "nn/module.hpp"

namespace tg::nn {

// What a recurrent layer carries from one call to the next: h (and, for the LSTM, the cell c),
// each [B, hidden]. Undefined tensors mean zeros.
struct RecurrentState {
  Tensor h, c;
  // The same values cut from the tape, so that the next window's backward pass stops here:
  // truncated backpropagation through time.
  RecurrentState detached() const;  // clones: new leaves
};

class RecurrentLayer : public Module {
 public:
  virtual std::pair<Tensor, RecurrentState> forward(const Tensor& x,
                                                    const RecurrentState& state = {}) const = 0;
  size_t input_size() const { return weight_ih_.size(1); }
  size_t hidden_size() const { return weight_hh_.size(1); }

 protected:
  RecurrentLayer(size_t input, size_t hidden, size_t gates, Generator& gen);
  // The gates' input projections of every step, one [B, gates * hidden] tensor per step.
  std::vector<Tensor> input_gates(const Tensor& x, const char* layer) const;
  Tensor zeros_unless(const Tensor& given, size_t batch, const char* what) const;
  Tensor weight_ih_, weight_hh_, bias_ih_, bias_hh_;
};

class LSTM : public RecurrentLayer {
 public:
  LSTM(size_t input, size_t hidden, Generator& gen) : RecurrentLayer(input, hidden, 4, gen) {}
  std::pair<Tensor, RecurrentState> forward(const Tensor& x,
                                            const RecurrentState& state = {}) const override;
};

class GRU : public RecurrentLayer {
 public:
  GRU(size_t input, size_t hidden, Generator& gen) : RecurrentLayer(input, hidden, 3, gen) {}
  // state.c is not used.
  std::pair<Tensor, RecurrentState> forward(const Tensor& x,
                                            const RecurrentState& state = {}) const override;
};

}  // namespace tg::nn
