#include "autograd/precision.hpp"

#include "autograd/parallel.hpp"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace tg {

namespace {

std::atomic<Precision> g_precision{Precision::fp32};

}  // namespace

std::string native_bf16_instructions() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return "";
  std::string found;
  // AVX512_BF16: leaf 7 subleaf 1, EAX bit 5; usable only where the OS saves AVX-512 state,
  // which __builtin_cpu_supports("avx512f") checks.
  __cpuid_count(7, 1, eax, ebx, ecx, edx);
  if ((eax >> 5 & 1) && __builtin_cpu_supports("avx512f")) found = "avx512_bf16";
  // AMX-BF16: leaf 7 subleaf 0, EDX bit 22 (oneDNN asks the kernel for the tile state itself).
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  if (edx >> 22 & 1) found += found.empty() ? "amx_bf16" : " and amx_bf16";
  return found;
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

Precision resolve_precision(Precision requested) {
  const std::string missing = bf16_unavailable();
  if (requested == Precision::automatic) return missing.empty() ? Precision::bf16 : Precision::fp32;
  if (requested == Precision::bf16 && !missing.empty())
    throw std::invalid_argument("--precision bf16: " + missing +
                                "; use --precision fp32 (or auto, which picks fp32 here)");
  return requested;
}

void set_precision(Precision p) {
  g_precision.store(resolve_precision(p), std::memory_order_relaxed);
}

Precision precision() {
  return g_precision.load(std::memory_order_relaxed);
}

PrecisionScope::PrecisionScope(Precision p) : previous_(precision()) {
  set_precision(p);
}
PrecisionScope::~PrecisionScope() {
  g_precision.store(previous_, std::memory_order_relaxed);
}

namespace detail {

namespace {

using dnnl::memory;

// fp32 -> bf16, rounding to nearest even; a NaN stays a NaN (its top payload bit is set, so
// rounding cannot carry it into infinity). Branch-free, so the packing loop vectorises.
[[gnu::always_inline]] inline uint16_t to_bf16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t rounded = (u + 0x7fffu + (u >> 16 & 1)) >> 16;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? (u >> 16 | 0x40) : rounded);
}

// A rows x cols matrix stored with row length ld, packed densely as bf16. bf16 mode runs only
// where the CPU has AVX512_BF16 or AMX, so AVX-512 is there: its clone does 16 values per
// instruction where the x86-64 baseline does 4 (the same integer rounding, the same bits).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "default")))
#endif
void pack_rows_portable(const float* x, size_t rows, size_t cols, size_t ld, uint16_t* out) {
  for (size_t i = 0; i < rows; ++i) {
    const float* row = x + i * ld;
    uint16_t* dst = out + i * cols;
#pragma omp simd
    for (size_t j = 0; j < cols; ++j) dst[j] = to_bf16(row[j]);
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TG_HAVE_AVX512_BF16_PACK 1
// The same with AVX512_BF16's conversion, 32 values an instruction: it rounds as to_bf16 does
// (nearest even; a NaN keeps its sign and gets its quiet bit) but reads a denormal as zero,
// so a block of 32 with a denormal in it goes through to_bf16: the same bits, always.
__attribute__((target("avx512f,avx512bw,avx512dq,avx512bf16"))) void pack_rows_avx512_bf16(
    const float* x, size_t rows, size_t cols, size_t ld, uint16_t* out) {
  for (size_t i = 0; i < rows; ++i) {
    const float* row = x + i * ld;
    uint16_t* dst = out + i * cols;
    size_t j = 0;
    for (; j + 32 <= cols; j += 32) {
      const __m512 lo = _mm512_loadu_ps(row + j), hi = _mm512_loadu_ps(row + j + 16);
      constexpr int kDenormal = 0x20;  // fpclass category
      if (_mm512_fpclass_ps_mask(lo, kDenormal) | _mm512_fpclass_ps_mask(hi, kDenormal)) {
        for (size_t q = j; q < j + 32; ++q) dst[q] = to_bf16(row[q]);
        continue;
      }
      _mm512_storeu_si512(dst + j, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
    }
    for (; j < cols; ++j) dst[j] = to_bf16(row[j]);
  }
}
#endif

void pack_rows(const float* x, size_t rows, size_t cols, size_t ld, uint16_t* out) {
#ifdef TG_HAVE_AVX512_BF16_PACK
  static const bool native = __builtin_cpu_supports("avx512bf16") &&
                             __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512dq");
  if (native) return pack_rows_avx512_bf16(x, rows, cols, ld, out);
#endif
  pack_rows_portable(x, rows, cols, ld, out);
}

// Rows over the threads (outside a parallel region; inside one, on the calling thread).
void pack_bf16(const float* x, size_t rows, size_t cols, size_t ld, uint16_t* out) {
  parallel_for(rows, std::max<size_t>(1, 16384 / std::max<size_t>(cols, 1)),
               [&](size_t first, size_t last) {
                 pack_rows(x + first * ld, last - first, cols, ld, out + first * cols);
               });
}

// C (rows of length ldc) = P (dense m x n) + beta C: a product made in a dense buffer, put into
// strided rows (attention's heads). AVX-512 where there is bf16 mode, as pack_rows_portable.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "default")))
#endif
void add_rows(const float* p, size_t m, size_t n, float beta, float* c, size_t ldc) {
  for (size_t i = 0; i < m; ++i) {
    float* __restrict row = c + i * ldc;
    const float* __restrict product_row = p + i * n;
    if (beta == 0.0f)
      std::copy_n(product_row, n, row);
    else
#pragma omp simd
      for (size_t j = 0; j < n; ++j) row[j] = product_row[j] + beta * row[j];
  }
}

const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// One primitive per product shape and thread count: (trans_a, trans_b, m, n, k, ldc, alpha,
// beta, threads). oneDNN fixes a primitive's split over the threads when it is made, so one
// made on a single thread (inside a parallel region, or before the count was raised) would
// run single-threaded ever after.
using Key = std::tuple<bool, bool, size_t, size_t, size_t, size_t, float, float, size_t>;

struct Product {
  dnnl::matmul matmul;
  memory::desc a, b, c, scratchpad;
  bool brgemm;  // on oneDNN's brgemm kernels (AMX or AVX512_BF16), not its older gemm
  // oneDNN 2.6 takes a product whose C rows are strided (ldc > n: attention's heads inside
  // [B, T, C] rows) to its older AVX-512 gemm instead of brgemm. Such a product has here the
  // same product into dense rows (beta 0) on brgemm, which gemm_bf16 runs instead and then adds
  // into C: the same arithmetic, alpha A B + beta C. Null where not needed or not on brgemm.
  const Product* dense = nullptr;
};

Product make_product(const Key& key) {
  const auto [trans_a, trans_b, m, n, k, ldc, alpha, beta, threads] = key;
  const auto M = static_cast<memory::dim>(m), N = static_cast<memory::dim>(n),
             K = static_cast<memory::dim>(k), LDC = static_cast<memory::dim>(ldc);
  // op(A) is M x K: packed as M x K rows, or (transposed) as K x M rows read column-wise.
  const memory::desc a({M, K}, memory::data_type::bf16,
                       trans_a ? memory::dims{1, M} : memory::dims{K, 1});
  const memory::desc b({K, N}, memory::data_type::bf16,
                       trans_b ? memory::dims{1, K} : memory::dims{N, 1});
  const memory::desc c({M, N}, memory::data_type::f32, memory::dims{LDC, 1});
  dnnl::primitive_attr attr;
  // The caller's scratchpad: oneDNN's own is one buffer shared by every primitive (unless the
  // library was built for concurrent execution), and attention runs heads on several threads.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine());
    const bool brgemm = std::string_view(pd.impl_info_str()).starts_with("brg");
    return Product{dnnl::matmul(pd), a, b, c, pd.scratchpad_desc(), brgemm};
  } catch (const dnnl::error& e) {
    throw std::runtime_error("bf16 product " + std::to_string(m) + "x" + std::to_string(k) +
                             " by " + std::to_string(k) + "x" + std::to_string(n) +
                             ": oneDNN has no implementation here (" + e.what() + ")");
  }
}

// Made once per key and kept (std::map keeps the addresses of its elements).
const Product& product(const Key& key) {
  static std::mutex mutex;
  static std::map<Key, Product> cache;
  const std::lock_guard lock(mutex);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  Product made = make_product(key);
  const auto [trans_a, trans_b, m, n, k, ldc, alpha, beta, threads] = key;
  if (ldc != n && !made.brgemm) {
    const Key dense_key{trans_a, trans_b, m, n, k, n, alpha, 0.0f, threads};
    auto it = cache.find(dense_key);
    if (it == cache.end()) it = cache.emplace(dense_key, make_product(dense_key)).first;
    if (it->second.brgemm) made.dense = &it->second;
  }
  return cache.emplace(key, std::move(made)).first->second;
}

}  // namespace

// The error of making one small bf16 product through oneDNN, or "" when it can be made.
std::string bf16_product_error() {
  try {
    make_product(Key{false, false, 16, 16, 16, 16, 1.0f, 0.0f, 1});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

Operand pack_operand(const float* x, size_t rows, size_t cols, size_t ld,
                     std::vector<uint16_t>& storage) {
  if (precision() != Precision::bf16) return {x, ld, nullptr};
  storage.resize(rows * cols);
  return pack_operand(x, rows, cols, ld, storage.data());
}

Operand pack_operand(const float* x, size_t rows, size_t cols, size_t ld, uint16_t* storage) {
  if (precision() != Precision::bf16) return {x, ld, nullptr};
  pack_bf16(x, rows, cols, ld, storage);
  return {x, ld, storage};
}

void gemm_bf16(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, float alpha,
               const Operand& a, const Operand& b, float beta, float* c, size_t ldc) {
  // Each thread packs into its own buffers (attention runs heads on several threads).
  thread_local std::vector<uint16_t> a16, b16;
  thread_local std::vector<std::byte> scratch;
  thread_local dnnl::stream stream(engine());
  const uint16_t* a_bf16 = a.bf16;
  const uint16_t* b_bf16 = b.bf16;
  if (!a_bf16) {
    a16.resize(m * k);
    pack_bf16(a.f32, trans_a ? k : m, trans_a ? m : k, a.ld, a16.data());
    a_bf16 = a16.data();
  }
  if (!b_bf16) {
    b16.resize(k * n);
    pack_bf16(b.f32, trans_b ? n : k, trans_b ? k : n, b.ld, b16.data());
    b_bf16 = b16.data();
  }
  const Product* p = &product({trans_a, trans_b, m, n, k, ldc, alpha, beta, parallel_width()});
  thread_local std::vector<float> dense;
  float* out = c;
  if (p->dense) {  // strided C rows: the dense product on brgemm, then added into C
    p = p->dense;
    dense.resize(m * n);
    out = dense.data();
  }
  memory a_mem(p->a, engine(), const_cast<uint16_t*>(a_bf16));
  memory b_mem(p->b, engine(), const_cast<uint16_t*>(b_bf16));
  memory c_mem(p->c, engine(), out);
  scratch.resize(std::max<size_t>(scratch.size(), p->scratchpad.get_size()));
  memory scratch_mem(p->scratchpad, engine(), scratch.data());
  p->matmul.execute(stream, {{DNNL_ARG_SRC, a_mem},
                             {DNNL_ARG_WEIGHTS, b_mem},
                             {DNNL_ARG_DST, c_mem},
                             {DNNL_ARG_SCRATCHPAD, scratch_mem}});
  stream.wait();
  if (out != c) add_rows(out, m, n, beta, c, ldc);
}

}  // namespace detail

std::string bf16_unavailable() {
  // Probed once: oneDNN decides at start which kernels this CPU (or ONEDNN_MAX_CPU_ISA, or a
  // virtual machine that hides instructions) allows, so the answer never changes in a process.
  static const std::string reason = []() -> std::string {
    if (!cpu_has_native_bf16())
      return "this CPU has no native bf16 products (neither the AVX512_BF16 nor the AMX-BF16 "
             "instructions)";
    if (const std::string error = detail::bf16_product_error(); !error.empty())
      return "this CPU has " + native_bf16_instructions() +
             ", but a probe found no bf16 product in oneDNN (" + error + ")";
    return "";
  }();
  return reason;
}

}  // namespace tg
