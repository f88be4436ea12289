// The precision of the matrix products (like torch.autocast on the CPU): fp32, or bf16 inputs
// with fp32 accumulation and output through oneDNN where the CPU multiplies bf16 natively
// (AVX512_BF16 or AMX). Everything else stays fp32 in either mode: parameters and their
// gradients, optimizer state, LayerNorm, softmax, the loss and every reduction. Every product
// of the ops goes through detail::gemm (blas.hpp), which reads this process-wide setting, so
// Linear, attention's QK^T and PV, the output projection and the fused linear cross-entropy
// all follow it, forward and backward.
#pragma once

#include <string>

#include "base/enum_names.hpp"

namespace tg {

// automatic: bf16 where the CPU has native bf16, else fp32 (resolve_precision says which).
enum class Precision { fp32, bf16, automatic };
inline constexpr base::NameTable<Precision, 3> kPrecisionNames{
    {{Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}, {Precision::automatic, "auto"}}};

// The CPU's bf16 instructions that oneDNN's bf16 products use: "avx512_bf16", "amx_bf16",
// both joined by " and ", or "" when it has neither.
std::string native_bf16_instructions();
inline bool cpu_has_native_bf16() {
  return !native_bf16_instructions().empty();
}

// fp32 or bf16: `automatic` becomes bf16 where the CPU has native bf16 and fp32 elsewhere;
// bf16 on a CPU without it throws std::invalid_argument naming the missing instructions.
Precision resolve_precision(Precision requested);

// The products' precision from now on, for every thread (set once per run, like the thread
// count; a Trainer sets it from its configuration). bf16 must have been resolved: setting it
// on a CPU without native bf16 throws as resolve_precision does.
void set_precision(Precision p);
Precision precision();

// Sets a precision for a scope and restores the previous one (tests, benchmarks).
class PrecisionScope {
 public:
  explicit PrecisionScope(Precision p);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  Precision previous_;
};

namespace detail {

// C[m, n] = alpha op(A) op(B) + beta C with A and B rounded to bf16 (nearest even) and the
// products summed in fp32, through a oneDNN matmul primitive created once per shape and kept.
// Same arguments as gemm (blas.hpp), which calls it in bf16 mode.
void gemm_bf16(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, float alpha,
               const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
               size_t ldc);

}  // namespace detail
}  // namespace tg
