// Row kernels for the fused ops, vectorised: compiled for AVX-512, AVX2 and baseline x86-64
// and chosen at load time by CPU features (not CPU model: virtual CPUs often report an unknown
// one), so the library stays portable and fast. exp is a Cephes-style polynomial (within 2 ulp of
// std::exp over the float range) because std::exp does not vectorise without -ffast-math, which
// this project never uses. The file is compiled with -fno-trapping-math (no value changes; FP
// exceptions are never inspected): without it GCC will not if-convert the clamps around the
// float-to-int step, and every clone but AVX-512's (which has masks) runs scalar.
#pragma once

#include <cstddef>

namespace tg::detail {

float row_max(const float* x, size_t n);
// log(sum(exp(x))) of one row, computed stably.
float row_logsumexp(const float* x, size_t n);
// y[j] = exp(x[j] - shift) for all j; returns the sum of the y.
float row_exp_shifted(const float* x, float shift, float* y, size_t n);
// g[j] += scale * exp(x[j] - shift)
void row_add_scaled_exp(const float* x, float shift, float scale, float* g, size_t n);
// GPT-2's GELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with tanh through the
// vectorised exp (libm's tanhf is scalar and was a fifth of a GPT training step).
void gelu_forward(const float* x, float* y, size_t n);
// gx[j] += g[j] * gelu'(x[j])
void gelu_backward(const float* x, const float* g, float* gx, size_t n);
// The vectorisable exp itself (scalar entry point, for tests).
float exp_approx(float x);
// Which clone of these kernels this CPU runs: "avx512f", "avx2" or "default". Their sums run
// in different orders, so bit-exact comparisons of whole runs hold within one of them.
const char* simd_isa();

}  // namespace tg::detail
