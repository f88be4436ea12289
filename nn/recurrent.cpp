#include "nn/recurrent.hpp"

#include <cmath>
#include <tuple>

namespace tg::nn {

RecurrentState RecurrentState::detached() const {
  RecurrentState out;
  if (h.defined()) out.h = h.clone();
  if (c.defined()) out.c = c.clone();
  return out;
}

RecurrentLayer::RecurrentLayer(size_t input, size_t hidden, size_t gates, Generator& gen) {
  if (input == 0 || hidden == 0)
    throw std::invalid_argument("recurrent layer: sizes must be positive, got input=" +
                                std::to_string(input) + " hidden=" + std::to_string(hidden));
  const float bound = 1.0f / std::sqrt(static_cast<float>(hidden));
  // PyTorch's registration (and so drawing) order: weight_ih, weight_hh, bias_ih, bias_hh.
  weight_ih_ = register_parameter("weight_ih",
                                  rand_uniform({gates * hidden, input}, gen, -bound, bound, true));
  weight_hh_ = register_parameter("weight_hh",
                                  rand_uniform({gates * hidden, hidden}, gen, -bound, bound, true));
  bias_ih_ = register_parameter("bias_ih", rand_uniform({gates * hidden}, gen, -bound, bound, true),
                                ParamRole::bias);
  bias_hh_ = register_parameter("bias_hh", rand_uniform({gates * hidden}, gen, -bound, bound, true),
                                ParamRole::bias);
}

std::vector<Tensor> RecurrentLayer::input_gates(const Tensor& x, const char* layer) const {
  if (x.dim() != 3 || x.size(2) != input_size())
    throw std::invalid_argument(std::string(layer) + ": input must be [batch, time, " +
                                std::to_string(input_size()) + "], got " + to_string(x.shape()));
  return unbind(linear(x, weight_ih_, bias_ih_), 1);
}

Tensor RecurrentLayer::zeros_unless(const Tensor& given, size_t batch, const char* what) const {
  const Shape expected{batch, hidden_size()};
  if (!given.defined()) return Tensor::zeros(expected);
  if (given.shape() != expected)
    throw std::invalid_argument(std::string(what) + " must be " + to_string(expected) + ", got " +
                                to_string(given.shape()));
  return given;
}

std::pair<Tensor, RecurrentState> LSTM::forward(const Tensor& x,
                                                const RecurrentState& state) const {
  const std::vector<Tensor> gx = input_gates(x, "LSTM");
  Tensor h = zeros_unless(state.h, x.size(0), "LSTM: state h");
  Tensor c = zeros_unless(state.c, x.size(0), "LSTM: state c");
  std::vector<Tensor> outputs;
  for (const Tensor& g_t : gx) {
    std::tie(h, c) = lstm_cell(g_t + linear(h, weight_hh_, bias_hh_), c);
    outputs.push_back(h);
  }
  return {stack(outputs, 1), {h, c}};
}

std::pair<Tensor, RecurrentState> GRU::forward(const Tensor& x, const RecurrentState& state) const {
  const std::vector<Tensor> gx = input_gates(x, "GRU");
  Tensor h = zeros_unless(state.h, x.size(0), "GRU: state h");
  std::vector<Tensor> outputs;
  for (const Tensor& g_t : gx) {
    const std::vector<Tensor> gi = chunk(g_t, 3, 1);
    const std::vector<Tensor> gh = chunk(linear(h, weight_hh_, bias_hh_), 3, 1);
    const Tensor r = sigmoid(gi[0] + gh[0]), z = sigmoid(gi[1] + gh[1]);
    const Tensor n = tanh(gi[2] + r * gh[2]);
    h = n + z * (h - n);  // (1 - z) n + z h
    outputs.push_back(h);
  }
  return {stack(outputs, 1), {h, Tensor()}};
}

}  // namespace tg::nn
