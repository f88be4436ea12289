// The precision of the matrix products (like torch.autocast on the CPU): fp32, or bf16 inputs
// with fp32 accumulation and output through oneDNN where the CPU multiplies bf16 natively
// (AVX512_BF16 or AMX). Everything else stays fp32 in either mode: parameters and their
// gradients, optimizer state, LayerNorm, softmax, the loss and every reduction. Every product
// of the ops goes through detail::gemm (blas.hpp), which reads this process-wide setting, so
// Linear, attention's QK^T and PV, the output projection and the fused linear cross-entropy
// all follow it, forward and backward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/enum_names.hpp"

namespace tg {

// automatic: bf16 where the CPU has native bf16, else fp32 (resolve_precision says which).
enum class Precision { fp32, bf16, automatic };
inline constexpr base::NameTable<Precision, 3> kPrecisionNames{
    {{Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}, {Precision::automatic, "auto"}}};

// The CPU's bf16 instructions that oneDNN's bf16 products use: "avx512_bf16", "amx_bf16",
// both joined by " and ", or "" when it has neither.
std::string native_bf16_instructions();
// The oneDNN library the bf16 products run on ("3.0.0"), for the run files.
std::string onednn_version();
inline bool cpu_has_native_bf16() {
  return !native_bf16_instructions().empty();
}

// Why bf16 products cannot run here ("" when they can): the CPU lacks the instructions, or a
// probe (one 16x16x16 product made through oneDNN at the first call) finds no implementation,
// as where ONEDNN_MAX_CPU_ISA or a virtual machine hides them.
std::string bf16_unavailable();

// fp32 or bf16: `automatic` becomes bf16 where bf16 products run (bf16_unavailable() is "")
// and fp32 elsewhere; bf16 where they cannot throws std::invalid_argument saying why.
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

// An operand of a product: an fp32 matrix with its row length as stored, and, where it was
// rounded to bf16 already (pack_operand), its dense bf16 copy. An operand that several
// products read (a weight, the logits of the fused loss) is rounded once instead of once per
// product; the numbers are the same either way.
struct Operand {
  const float* f32 = nullptr;
  size_t ld = 0;
  const uint16_t* bf16 = nullptr;  // rows x cols as stored, densely; null: rounded on use
};

// `rows` x `cols` of x (row length ld) as an Operand: in bf16 mode rounded into `storage`
// once (over the threads), in fp32 mode as it is. Valid while x and storage are.
Operand pack_operand(const float* x, size_t rows, size_t cols, size_t ld,
                     std::vector<uint16_t>& storage);
// The same into the caller's room for rows x cols values (unused, and may be null, in fp32).
Operand pack_operand(const float* x, size_t rows, size_t cols, size_t ld, uint16_t* storage);

// C[m, n] = alpha op(A) op(B) + beta C with A and B rounded to bf16 (nearest even) and the
// products summed in fp32, through a oneDNN matmul primitive created once per shape and kept.
// Same arguments as gemm (blas.hpp), which calls it in bf16 mode.
void gemm_bf16(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, float alpha,
               const Operand& a, const Operand& b, float beta, float* c, size_t ldc);

}  // namespace detail
}  // namespace tg
