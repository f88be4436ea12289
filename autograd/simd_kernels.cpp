#include "autograd/simd_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tg::detail {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TG_CLONES
#endif

namespace {

// exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n ln2 (split in two for accuracy),
// exp(r) by a degree-6 polynomial on [-ln2/2, ln2/2]. Branch-free so loops vectorise.
[[gnu::always_inline]] inline float exp_poly(float x) {
  // Plain comparisons, not std::min/max: a generic helper cannot inline into a target clone.
  x = x > 88.3762626647949f ? 88.3762626647949f : x;
  x = x < -87.3365447505531f ? -87.3365447505531f : x;
  // Round to nearest by adding and removing 1.5 * 2^23 (no libm call, so it vectorises).
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return p * scale;
}

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;

// tanh(u) = 1 - 2 / (exp(2u) + 1). |u| >= 9 gives +-1 in float anyway; clamping there keeps
// exp finite, and NaN goes through as 0 (the caller's factor x carries the NaN on).
[[gnu::always_inline]] inline float gelu_tanh(float x) {
  float u = kGeluScale * (x + kGeluCubic * x * x * x);
  u = u > 9.0f ? 9.0f : u;
  u = u < -9.0f ? -9.0f : u;
  u = u != u ? 0.0f : u;
  return 1.0f - 2.0f / (exp_poly(2.0f * u) + 1.0f);
}

}  // namespace

TG_CLONES void gelu_forward(const float* x, float* y, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + gelu_tanh(x[i]));
}

TG_CLONES void gelu_backward(const float* x, const float* g, float* gx, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i], t = gelu_tanh(v);
    const float dinner = kGeluScale * (1.0f + 3.0f * kGeluCubic * v * v);
    gx[i] += g[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * dinner);
  }
}

const char* simd_isa() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  // The same order of preference as the target_clones resolver.
  if (__builtin_cpu_supports("avx512f")) return "avx512f";
  if (__builtin_cpu_supports("avx2")) return "avx2";
#endif
  return "default";
}

float exp_approx(float x) {
  if (std::isnan(x)) return x;
  if (x == -std::numeric_limits<float>::infinity()) return 0.0f;
  return exp_poly(x);
}

// NaN in, NaN out: a max reduction alone would skip NaNs and hide a diverged model.
TG_CLONES float row_max(const float* x, size_t n) {
  float m = -std::numeric_limits<float>::infinity();
  int nans = 0;
#pragma omp simd reduction(max : m) reduction(+ : nans)
  for (size_t i = 0; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    nans += x[i] != x[i];
  }
  return nans ? std::numeric_limits<float>::quiet_NaN() : m;
}

TG_CLONES float row_exp_shifted(const float* x, float shift, float* y, size_t n) {
  float total = 0.0f;
#pragma omp simd reduction(+ : total)
  for (size_t i = 0; i < n; ++i) {
    // -inf inputs (masked positions) must give exactly 0, not the clamp's tiny value. exp is
    // computed for every entry and then selected: a conditional call would not vectorise
    // without AVX-512's masks.
    const float e = x[i] == -std::numeric_limits<float>::infinity() ? 0.0f : 1.0f;
    const float v = exp_poly(x[i] - shift) * e;
    y[i] = v;
    total += v;
  }
  return total;
}

TG_CLONES float row_logsumexp(const float* x, size_t n) {
  const float m = row_max(x, n);
  if (m == -std::numeric_limits<float>::infinity() || std::isnan(m)) return m;
  float total = 0.0f;
#pragma omp simd reduction(+ : total)
  for (size_t i = 0; i < n; ++i)
    total += exp_poly(x[i] - m) * (x[i] == -std::numeric_limits<float>::infinity() ? 0.0f : 1.0f);
  return m + std::log(total);
}

TG_CLONES void row_add_scaled_exp(const float* x, float shift, float scale, float* g, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i)
    g[i] += scale * exp_poly(x[i] - shift) *
            (x[i] == -std::numeric_limits<float>::infinity() ? 0.0f : 1.0f);
}

}  // namespace tg::detail
