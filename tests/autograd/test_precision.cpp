// bf16 products (autograd/precision.hpp) against fp32. Bound of one product: bf16 keeps 8
// significant bits, so rounding an input moves it by at most u = 2^-8 of itself, and a product
// of two rounded inputs by (2u + u^2) of |a b|; summing K such products in fp32 adds at most
// K 2^-24 of their absolute sum. So, element by element,
//   |C_bf16 - C_fp32| <= (2u + u^2 + K 2^-24 (1 + 2u + u^2)) (|A| |B|)_ij  (+ fp32's own K 2^-24).
// The ops' checks (linear and matmul, forward and backward) use this bound; attention and the
// fused cross-entropy, whose products feed softmax, are checked against a normwise 2^-5 of
// their largest fp32 value (the same argument with softmax's Lipschitz constant <= 1 and a
// factor 4 for the two products in a row). Where the CPU has no native bf16, the product
// cases are skipped with a message and the refusal is tested instead.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "autograd/autograd.hpp"
#include "autograd/blas.hpp"
#include "autograd/op_cases.hpp"
#include "autograd/precision.hpp"

using namespace tg;

namespace {

struct native_bf16 {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) {
    boost::test_tools::assertion_result r(cpu_has_native_bf16());
    if (!r) {
      r.message() << "SKIPPED: this CPU has no native bf16 (AVX512_BF16 or AMX-BF16)";
      BOOST_TEST_MESSAGE("SKIPPED: this CPU has no native bf16 (AVX512_BF16 or AMX-BF16)");
    }
    return r;
  }
};
struct no_native_bf16 {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) {
    boost::test_tools::assertion_result r(!cpu_has_native_bf16());
    if (!r) {
      r.message() << "SKIPPED: this CPU has native bf16 (" << native_bf16_instructions()
                  << "): the refusal cannot be seen here";
      BOOST_TEST_MESSAGE("SKIPPED: this CPU has native bf16: the refusal cannot be seen here");
    }
    return r;
  }
};

constexpr double kU = 1.0 / 256;  // bf16's unit roundoff, 2^-8

double product_bound(size_t k) {
  const double fp32 = static_cast<double>(k) * std::ldexp(1.0, -24);
  return 2 * kU + kU * kU + fp32 * (1 + 2 * kU + kU * kU) + fp32;
}

std::vector<float> random_values(size_t n, uint64_t seed, float scale = 1.0f) {
  Generator gen(seed);
  Tensor t = randn({n}, gen, scale);
  return {t.data(), t.data() + n};
}

// Every element of got within bound * (|A| |B|)_ij of want, |A| |B| given as `scale`.
void check_within(const std::vector<float>& got, const std::vector<float>& want,
                  const std::vector<float>& scale, double bound, const std::string& what) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  double worst = 0;  // the largest error as a share of its allowance
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = bound * scale[i] + 1e-30;
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]) / allowed);
  }
  BOOST_TEST(worst <= 1.0, what << ": error up to " << worst << " times the bf16 bound");
  BOOST_TEST_MESSAGE(what << ": largest error " << worst << " of the bf16 bound");
}

// C = alpha op(A) op(B) + beta C in the given precision, for A, B stored with row lengths
// one wider than needed (so that lda and ldb are not the matrices' widths).
std::vector<float> product(Precision p, bool ta, bool tb, size_t m, size_t n, size_t k, float alpha,
                           const std::vector<float>& a, const std::vector<float>& b, float beta,
                           std::vector<float> c, bool absolute = false) {
  const size_t lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 1;
  std::vector<float> ab = a, bb = b;
  if (absolute) {
    for (float& x : ab) x = std::abs(x);
    for (float& x : bb) x = std::abs(x);
  }
  const PrecisionScope scope(p);
  detail::gemm(ta, tb, m, n, k, alpha, ab.data(), lda, bb.data(), ldb, beta, c.data(), n);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bf16_products)

BOOST_AUTO_TEST_CASE(names_and_resolution) {
  BOOST_TEST(base::name_of(kPrecisionNames, Precision::automatic) == "auto");
  BOOST_TEST((base::parse_name(kPrecisionNames, "bf16", "--precision") == Precision::bf16));
  BOOST_CHECK_THROW(base::parse_name(kPrecisionNames, "fp16", "--precision"),
                    std::invalid_argument);
  BOOST_TEST((resolve_precision(Precision::fp32) == Precision::fp32));
  BOOST_TEST((resolve_precision(Precision::automatic) ==
              (cpu_has_native_bf16() ? Precision::bf16 : Precision::fp32)));
  BOOST_TEST((precision() == Precision::fp32));  // the default
}

BOOST_AUTO_TEST_CASE(bf16_refused_without_native_instructions,
                     *boost::unit_test::precondition(no_native_bf16())) {
  try {
    resolve_precision(Precision::bf16);
    BOOST_FAIL("bf16 was accepted on a CPU without native bf16");
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find("AVX512_BF16") != std::string::npos, message);
    BOOST_TEST(message.find("--precision fp32") != std::string::npos, message);
  }
  BOOST_CHECK_THROW(set_precision(Precision::bf16), std::invalid_argument);
  BOOST_TEST((precision() == Precision::fp32));
}

BOOST_AUTO_TEST_CASE(gemm_within_the_bf16_bound, *boost::unit_test::precondition(native_bf16())) {
  const size_t m = 37, n = 29, k = 300;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{0.5f, 1.0f}}) {
        const auto a = random_values((ta ? k : m) * ((ta ? m : k) + 1), 1);
        const auto b = random_values((tb ? n : k) * ((tb ? k : n) + 1), 2);
        const auto c0 = random_values(m * n, 3);
        const auto want = product(Precision::fp32, ta, tb, m, n, k, alpha, a, b, beta, c0);
        const auto got = product(Precision::bf16, ta, tb, m, n, k, alpha, a, b, beta, c0);
        auto scale = product(Precision::fp32, ta, tb, m, n, k, std::abs(alpha), a, b, 0.0f,
                             std::vector<float>(m * n), true);
        for (size_t i = 0; i < scale.size(); ++i) scale[i] += std::abs(beta * c0[i]) * 1e-6f;
        check_within(got, want, scale, product_bound(k),
                     "gemm ta " + std::to_string(ta) + " tb " + std::to_string(tb) + " beta " +
                         std::to_string(beta));
        // Not fp32 in disguise: the inputs were rounded (the error is far above fp32's).
        double largest = 0;
        for (size_t i = 0; i < got.size(); ++i)
          largest = std::max(largest, static_cast<double>(std::abs(got[i] - want[i])));
        BOOST_TEST(largest > 1e-4, "bf16 products equal fp32's: the bf16 path did not run");
      }
}

// An operand rounded once (pack_operand, for products that share it) gives the very product
// the on-the-fly rounding gives, transposed or not, from a column block of a wider matrix;
// in fp32 mode packing is the matrix itself, untouched.
BOOST_AUTO_TEST_CASE(packed_operands_give_the_same_bits,
                     *boost::unit_test::precondition(native_bf16())) {
  const size_t m = 33, n = 70, k = 129;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const size_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k,
                   b_cols = tb ? k : n;
      // NaN, infinities, a denormal and a value that rounds up across the exponent.
      auto a = random_values(a_rows * (a_cols + 3), 5);
      a[0] = std::nanf("");
      a[1] = -INFINITY;
      a[2] = 1e-40f;
      a[3] = 1.99999994f;
      const auto b = random_values(b_rows * (b_cols + 3), 6);
      const auto c0 = random_values(m * n, 7);
      const PrecisionScope scope(Precision::bf16);
      std::vector<float> want = c0, got = c0;
      detail::gemm(ta, tb, m, n, k, 0.5f, a.data(), a_cols + 3, b.data(), b_cols + 3, 1.0f,
                   want.data(), n);
      std::vector<uint16_t> a16, b16;
      const detail::Operand pa = detail::pack_operand(a.data(), a_rows, a_cols, a_cols + 3, a16);
      const detail::Operand pb = detail::pack_operand(b.data(), b_rows, b_cols, b_cols + 3, b16);
      BOOST_TEST((pa.bf16 == a16.data() && a16.size() == a_rows * a_cols));
      detail::gemm(ta, tb, m, n, k, 0.5f, pa, pb, 1.0f, got.data(), n);
      BOOST_TEST(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0,
                 "ta " << ta << " tb " << tb << ": a packed operand changed the product");
      // a[0] is op(A)[0][0] whether transposed or not: the NaN came through to row 0.
      BOOST_TEST(std::isnan(got[0]));
    }
  std::vector<uint16_t> unused;
  const std::vector<float> x(6, 1.0f);
  const detail::Operand plain = detail::pack_operand(x.data(), 2, 3, 3, unused);
  BOOST_TEST((plain.f32 == x.data() && plain.ld == 3 && plain.bf16 == nullptr && unused.empty()));
}

// Rounding to bf16 (pack_operand) against its definition, on every path of the packing loop
// (blocks of 32 with and without a denormal in them, and a row's tail): nearest even on the
// top 16 bits, a NaN made quiet, a denormal rounded like any value, not flushed to zero.
BOOST_AUTO_TEST_CASE(rounding_is_nearest_even_and_keeps_denormals,
                     *boost::unit_test::precondition(native_bf16())) {
  auto from_bits = [](uint32_t u) { return std::bit_cast<float>(u); };
  auto reference = [](float x) {
    const uint32_t u = std::bit_cast<uint32_t>(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(u >> 16 | 0x40);
    return static_cast<uint16_t>((u + 0x7fffu + (u >> 16 & 1)) >> 16);
  };
  const size_t rows = 3, cols = 100, ld = 103;  // 3 blocks of 32 and a tail of 4 a row
  std::vector<float> x = random_values(rows * ld, 31);
  // Row 0, block 1: ties to even (down, up), a denormal of each sign, the largest float (up to
  // infinity), a signalling NaN, -0; row 1's tail a denormal; row 2 plain values only.
  const std::vector<std::pair<size_t, float>> specials{
      {32, from_bits(0x3f808000u)}, {33, from_bits(0x3f818000u)}, {34, 1e-40f}, {35, -3e-39f},
      {36, from_bits(0x7f7fffffu)}, {37, from_bits(0x7f800001u)}, {38, -0.0f},  {ld + 98, 5e-41f}};
  for (const auto& [i, v] : specials) x[i] = v;
  std::vector<uint16_t> out;
  const PrecisionScope scope(Precision::bf16);
  detail::pack_operand(x.data(), rows, cols, ld, out);
  size_t wrong = 0;
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < cols; ++j) wrong += out[r * cols + j] != reference(x[r * ld + j]);
  BOOST_TEST(wrong == 0u, wrong << " values rounded otherwise than to nearest even");
  BOOST_TEST(out[32] == 0x3f80u);  // a tie goes to the even neighbour: down
  BOOST_TEST(out[33] == 0x3f82u);  // and up
  BOOST_TEST(out[34] == 0x0001u);  // 1e-40 is 0x000116c2: a denormal stays one
  BOOST_TEST(out[36] == 0x7f80u);  // the largest float rounds up to infinity
  BOOST_TEST(out[37] == 0x7fc0u);  // a signalling NaN comes out quiet
  BOOST_TEST(out[cols + 98] != 0u);
}

// A product into C rows with room to spare (ldc > n, attention's heads inside [B, T, C] rows)
// gives the bits of the same product into dense rows, and leaves the rest of each row alone.
BOOST_AUTO_TEST_CASE(strided_c_rows_get_the_dense_product,
                     *boost::unit_test::precondition(native_bf16())) {
  const size_t m = 64, n = 64, k = 64, ldc = 3 * n;
  const auto a = random_values(m * k, 8), b = random_values(k * n, 9);
  const auto c0 = random_values(m * ldc, 10);
  const PrecisionScope scope(Precision::bf16);
  for (const bool tb : {false, true})
    for (const float beta : {0.0f, 1.0f}) {
      std::vector<float> dense(m * n), strided = c0;
      for (size_t i = 0; i < m; ++i) std::copy_n(c0.data() + i * ldc, n, dense.data() + i * n);
      detail::gemm(false, tb, m, n, k, 0.125f, a.data(), k, b.data(), tb ? k : n, beta,
                   dense.data(), n);
      detail::gemm(false, tb, m, n, k, 0.125f, a.data(), k, b.data(), tb ? k : n, beta,
                   strided.data(), ldc);
      size_t differ = 0, touched = 0;
      for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < ldc; ++j) {
          const float got = strided[i * ldc + j];
          if (j < n)
            differ += std::memcmp(&got, &dense[i * n + j], sizeof got) != 0;
          else
            touched += std::memcmp(&got, &c0[i * ldc + j], sizeof got) != 0;
        }
      BOOST_TEST(differ == 0u, "tb " << tb << " beta " << beta << ": " << differ << " differ");
      BOOST_TEST(touched == 0u, "tb " << tb << " beta " << beta << ": " << touched
                                      << " values beside the product changed");
    }
}

// An op's output and input gradients in one precision.
using OpRun = testing::ForwardBackward;
OpRun run_op(Precision p, const std::vector<Shape>& shapes,
             const std::function<Tensor(std::vector<Tensor>&)>& op) {
  const PrecisionScope scope(p);
  return testing::forward_backward(shapes, op, 11, 0.5f);
}

void check_normwise(const OpRun& got, const OpRun& want, double tolerance,
                    const std::string& what) {
  // Every op's output passes through a product; a gradient may not (a bias's is a sum).
  auto check = [&](const std::vector<float>& g, const std::vector<float>& w,
                   const std::string& part, bool through_a_product) {
    double largest = 0, error = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      largest = std::max(largest, static_cast<double>(std::abs(w[i])));
      error = std::max(error, static_cast<double>(std::abs(g[i] - w[i])));
    }
    BOOST_TEST(error <= tolerance * largest, what << " " << part << ": error " << error << " > "
                                                  << tolerance << " x " << largest);
    if (through_a_product)
      BOOST_TEST(error > 0.0, what << " " << part << ": identical to fp32 (bf16 not used?)");
  };
  check(got.out, want.out, "output", true);
  for (size_t i = 0; i < want.grads.size(); ++i)
    check(got.grads[i], want.grads[i], "gradient " + std::to_string(i), false);
}

BOOST_AUTO_TEST_CASE(ops_forward_and_backward, *boost::unit_test::precondition(native_bf16())) {
  // Normwise 4 (2u + K 2^-24) with K <= 256: below 2^-5.
  const double tolerance = std::ldexp(1.0, -5);
  auto compare = [&](const std::string& what, const std::vector<Shape>& shapes,
                     const std::function<Tensor(std::vector<Tensor>&)>& op) {
    check_normwise(run_op(Precision::bf16, shapes, op), run_op(Precision::fp32, shapes, op),
                   tolerance, what);
  };
  compare("linear", {{6, 10, 64}, {48, 64}, {48}},
          [](std::vector<Tensor>& x) { return linear(x[0], x[1], x[2]); });
  compare("matmul", {{3, 20, 32}, {3, 32, 24}},
          [](std::vector<Tensor>& x) { return matmul(x[0], x[1]); });
  compare("causal_attention", {{2, 16, 3 * 32}}, [](std::vector<Tensor>& x) {
    Generator gen(5);
    return causal_attention(x[0], 4, 0.0f, false, gen);
  });
  const Ids targets({40}, [] {
    std::vector<int32_t> t(40);
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int32_t>(i * 7 % 50);
    return t;
  }());
  compare("linear_cross_entropy", {{40, 32}, {50, 32}, {50}},
          [&](std::vector<Tensor>& x) { return linear_cross_entropy(x[0], x[1], x[2], targets); });
}

// The fused output layer (with a bias) over `rows` x `vocab` logits, bf16 against fp32 on 1 and
// 2 threads, normwise within 4 (2u + K 2^-24) for sums of up to K terms.
static void check_fused_output_layer(size_t rows, size_t vocab, size_t width, size_t k) {
  const Ids targets({rows}, [&] {
    std::vector<int32_t> t(rows);
    for (size_t i = 0; i < rows; ++i) t[i] = static_cast<int32_t>((i * 7919) % vocab);
    return t;
  }());
  auto op = [&](std::vector<Tensor>& x) { return linear_cross_entropy(x[0], x[1], x[2], targets); };
  const std::vector<Shape> shapes{{rows, width}, {vocab, width}, {vocab}};
  const double tolerance =
      4 * (std::ldexp(1.0, -7) + static_cast<double>(k) * std::ldexp(1.0, -24));
  for (const int threads : {1, 2}) {
    set_num_threads(threads);
    check_normwise(run_op(Precision::bf16, shapes, op), run_op(Precision::fp32, shapes, op),
                   tolerance, "threads " + std::to_string(threads));
  }
  set_num_threads(1);
}

// The fused output layer in many chunks (104 rows of 40,000 logits); in bf16 mode its weight
// gradient is one product per group of chunks (838 rows of rounded logits kept), so one thread's
// 1,000 rows make two groups and two threads' slabs one each.
BOOST_AUTO_TEST_CASE(fused_output_layer_in_chunks_and_groups,
                     *boost::unit_test::precondition(native_bf16())) {
  check_fused_output_layer(1000, 40000, 8, 838);
}

// A weight of 2^24 values or more takes the other split in bf16 mode: one slab whose products
// run over the threads, chunks in multiples of 64 rows (here 192 and a last one of 108). The
// longest sum is the input gradient's, over the vocabulary.
BOOST_AUTO_TEST_CASE(fused_output_layer_with_a_large_weight,
                     *boost::unit_test::precondition(native_bf16())) {
  check_fused_output_layer(300, 70000, 240, 70000);
}

BOOST_AUTO_TEST_CASE(linear_saves_its_input_in_bf16,
                     *boost::unit_test::precondition(native_bf16())) {
  // In bf16 mode the weight gradient reads the input rounded to bf16, so backward keeps that
  // copy instead of the fp32 input: the input's values are freed with the caller's handle,
  // and the gradients are the same bits whether the caller still holds the input or not.
  const auto xs = random_values(8 * 16, 21), ws = random_values(12 * 16, 22);
  auto gradients = [&](bool drop_input) {
    const PrecisionScope scope(Precision::bf16);
    Tensor x = Tensor::from_vector({8, 16}, xs, true);
    Tensor w = Tensor::from_vector({12, 16}, ws, true);
    Tensor h = x * 1.0f;  // an activation, not a leaf
    Tensor loss = sum(linear(h, w) * linear(h, w));
    const Tensor route = h.without_data();
    if (drop_input) h = Tensor();
    BOOST_TEST(route.values_alive() == !drop_input);
    backward(loss);
    return std::make_pair(std::vector<float>(x.grad().begin(), x.grad().end()),
                          std::vector<float>(w.grad().begin(), w.grad().end()));
  };
  const auto kept = gradients(false), dropped = gradients(true);
  BOOST_TEST(kept.first == dropped.first);
  BOOST_TEST(kept.second == dropped.second);

  // Forward in bf16, backward in fp32: refused, not silently read from a missing fp32 input.
  Tensor x = Tensor::from_vector({8, 16}, xs, true);
  Tensor w = Tensor::from_vector({12, 16}, ws, true);
  Tensor loss;
  {
    const PrecisionScope scope(Precision::bf16);
    loss = sum(linear(x, w));
  }
  const PrecisionScope fp32(Precision::fp32);
  BOOST_CHECK_EXCEPTION(backward(loss), std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()).find("keep one precision") != std::string::npos;
  });
  tape().clear();
}

BOOST_AUTO_TEST_SUITE_END()
