// Every differentiable op. Each is implemented in one ops_*.cpp file with its forward and,
// right below it, its backward. All ops validate their arguments and throw
// std::invalid_argument / std::out_of_range with a message naming the op and the shapes or
// values involved.
#pragma once

#include <limits>
#include <utility>
#include <vector>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"

namespace tg {

// ---- element-wise, with NumPy broadcasting (ops_elementwise.cpp) -------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor add_scalar(const Tensor& x, float s);
Tensor mul_scalar(const Tensor& x, float s);
Tensor pow(const Tensor& x, float exponent);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // GPT-2's tanh approximation

inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor operator-(const Tensor& x) {
  return neg(x);
}
inline Tensor operator+(const Tensor& x, float s) {
  return add_scalar(x, s);
}
inline Tensor operator+(float s, const Tensor& x) {
  return add_scalar(x, s);
}
inline Tensor operator-(const Tensor& x, float s) {
  return add_scalar(x, -s);
}
inline Tensor operator-(float s, const Tensor& x) {
  return add_scalar(neg(x), s);
}
inline Tensor operator*(const Tensor& x, float s) {
  return mul_scalar(x, s);
}
inline Tensor operator*(float s, const Tensor& x) {
  return mul_scalar(x, s);
}
inline Tensor operator/(const Tensor& x, float s) {
  return mul_scalar(x, 1.0f / s);
}

// ---- matrix products, through OpenBLAS sgemm (ops_matmul.cpp) ----------------------------
// a: [..., M, K], b: [..., K, N] -> [..., M, N]; batch dims broadcast. Rank >= 2.
Tensor matmul(const Tensor& a, const Tensor& b);
// x: [..., in], weight: [out, in] (PyTorch's layout), bias: [out] or undefined -> [..., out].
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// ---- shape and movement (ops_shape.cpp) ---------------------------------------------------
// One dimension may be -1 (inferred).
Tensor reshape(const Tensor& x, const std::vector<long>& shape);
Tensor permute(const Tensor& x, const std::vector<int>& dims);
Tensor transpose(const Tensor& x, int dim0, int dim1);
// Elements [start, start + length) along `dim` (PyTorch's narrow; slicing with step 1).
Tensor narrow(const Tensor& x, int dim, size_t start, size_t length);
Tensor concat(const std::vector<Tensor>& xs, int dim);
// Tensors of one shape joined along a new dimension `dim` (0..rank): PyTorch's stack.
Tensor stack(const std::vector<Tensor>& xs, int dim);
// Pieces of ceil(size / chunks) along `dim`, the last one smaller when it does not divide
// (and fewer than `chunks` pieces when the size is small), as in PyTorch; each is a narrow.
std::vector<Tensor> chunk(const Tensor& x, size_t chunks, int dim);
// The slices along `dim`, each without that dimension: PyTorch's unbind.
std::vector<Tensor> unbind(const Tensor& x, int dim);

// ---- reductions (ops_reduce.cpp) ----------------------------------------------------------
// Empty axes reduce over everything.
Tensor sum(const Tensor& x, const std::vector<int>& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int>& axes = {}, bool keepdim = false);
// Maximum along one axis; the gradient goes to the first maximal element.
Tensor max(const Tensor& x, int axis, bool keepdim = false);

// ---- neural-network ops, fused where it pays (ops_nn.cpp) ---------------------------------
Tensor softmax(const Tensor& x, int axis = -1);
Tensor log_softmax(const Tensor& x, int axis = -1);
// Normalises over the last dimension; weight and bias have shape [last dim].
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps = 1e-5f);
// weight: [vocab, dim], ids of any shape -> ids.shape + [dim]. With sparse_grad the weight's
// gradient is kept as the touched rows only (SparseGrad), duplicates summed.
Tensor embedding(const Tensor& weight, const Ids& ids, bool sparse_grad = false);
// Zeroes each element with probability p and scales the rest by 1/(1-p); identity when not
// training or p == 0.
Tensor dropout(const Tensor& x, float p, bool training, Generator& gen);
// One LSTM step from its gate pre-activations, in PyTorch's order: gates [B, 4H] = input, forget,
// cell, output; c_prev [B, H]. Returns {h, c}: c = sigmoid(f) c_prev + sigmoid(i) tanh(g),
// h = sigmoid(o) tanh(c). The same values as those ops composed, in two tape nodes instead of
// about fifteen, and backward from the activations it keeps.
std::pair<Tensor, Tensor> lstm_cell(const Tensor& gates, const Tensor& c_prev);
// Where mask (broadcastable to x, non-differentiable) is non-zero, the result is `value`.
Tensor masked_fill(const Tensor& x, const Tensor& mask, float value);
// x: [..., T, S]. Sets entry (i, j) to `value` where j > i + (S - T): a query may not attend
// to later keys.
Tensor causal_mask(const Tensor& x, float value = -std::numeric_limits<float>::infinity());
// qkv: [B, T, 3C], queries, keys and values side by side (a fused projection's output).
// Multi-head causal attention, heads of width C / heads: per head softmax(q k^T / sqrt(D)
// + causal mask) v, with dropout p on the attention weights when training; the heads'
// outputs concatenated: [B, T, C]. One op (ops_attention.cpp): no permuted copies, and
// backward keeps only the weights. Same result as the composed ops, dropout draws included.
Tensor causal_attention(const Tensor& qkv, size_t heads, float dropout_p, bool training,
                        Generator& gen);
// The same from separate q, k, v ([B, T, C] each, heads as above), for a model that transforms
// them apart: one concat copy, then the fused kernel.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, size_t heads,
                        float dropout_p, bool training, Generator& gen);
// Rotary position embedding (RoFormer, LLaMA) of the queries and keys of a fused qkv
// [B, T, 3C]: in each head (width D = C / heads, even), each pair of columns (2i, 2i + 1) of q
// and k at position t is rotated by the angle t / base^(2i / D); v is passed through. The
// pairs are adjacent columns, as in Meta's LLaMA (Hugging Face's rotate_half pairs column i
// with i + D/2 instead). Its input and output are causal_attention's.
Tensor rotary_qk(const Tensor& qkv, size_t heads, float base = 10000.0f);
// logits: [..., V], targets: logits' shape without V. Fused log-softmax + negative
// log-likelihood, mean over targets != ignore_index (NaN when every target is ignored,
// as in PyTorch).
constexpr int kIgnoreIndex = -100;
Tensor cross_entropy(const Tensor& logits, const Ids& targets, int ignore_index = kIgnoreIndex);
// cross_entropy(linear(x, weight, bias), targets) without the [rows, V] logits: they are made
// a chunk of rows at a time, and the gradients (this op's output is a scalar) are computed
// from each chunk at once and only scaled in backward. The language models' loss: the output
// layer's logits are their largest activation and their gradient the second largest.
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const Ids& targets, int ignore_index = kIgnoreIndex);

}  // namespace tg
