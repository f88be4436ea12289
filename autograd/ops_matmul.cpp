// Matrix products. Every product is one or more cblas_sgemm calls on contiguous row-major
// buffers; backward passes let sgemm add into the gradients (beta 1), or write a new gradient
// buffer outright (beta 0, Tensor::grad_target) where their products cover it once.
#include "autograd/blas.hpp"
#include "autograd/ops.hpp"
#include "autograd/parallel.hpp"
#include "autograd/strided.hpp"
#include "autograd/tape.hpp"

#include <memory>
#include <stdexcept>
#include <string>

namespace tg {

namespace {

// C[M,N] (+)= op(A) op(B) on contiguous row-major matrices.
void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const float* a, const float* b,
          float beta, float* c) {
  detail::gemm(trans_a, trans_b, m, n, k, 1.0f, a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
}

Shape batch_of(const Shape& s) {
  return Shape(s.begin(), s.end() - 2);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  const Shape sa = a.shape(), sb = b.shape();
  if (sa.size() < 2 || sb.size() < 2)
    throw std::invalid_argument("matmul: both operands need rank >= 2, got " + to_string(sa) +
                                " and " + to_string(sb));
  const size_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k)
    throw std::invalid_argument("matmul: inner dimensions differ: " + to_string(sa) + " @ " +
                                to_string(sb));
  const Shape batch = detail::broadcast_shapes(batch_of(sa), batch_of(sb), "matmul");
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor out = Tensor::empty(out_shape);

  // Offsets (in matrices) of each batch entry in a and b; 0 strides where they broadcast.
  const detail::Strides stride_a = detail::broadcast_strides(batch_of(sa), batch);
  const detail::Strides stride_b = detail::broadcast_strides(batch_of(sb), batch);
  std::vector<std::pair<size_t, size_t>> pairs;
  pairs.reserve(numel(batch));
  detail::for_each_strided<2>(batch, {&stride_a, &stride_b}, [&](size_t, size_t ia, size_t ib) {
    pairs.emplace_back(ia * m * k, ib * k * n);
  });
  // A shared 2-D right operand (x @ W): one sgemm over all rows of a.
  const bool fold = sb.size() == 2 && numel(batch_of(sa)) == numel(batch);
  if (fold) {
    gemm(false, false, pairs.size() * m, n, k, a.data(), b.data(), 0.0f, out.data());
  } else {
    for (size_t i = 0; i < pairs.size(); ++i)
      gemm(false, false, m, n, k, a.data() + pairs[i].first, b.data() + pairs[i].second, 0.0f,
           out.data() + i * m * n);
  }
  if (!needs_grad({&a, &b})) return out;
  // An operand that is not broadcast gets each of its matrices' gradients from one product.
  const bool a_once = numel(batch_of(sa)) == numel(batch);
  const bool b_once = numel(batch_of(sb)) == numel(batch) || fold;
  // dA reads B's values and dB reads A's: keep each only where the other gradient is wanted.
  record(
      "matmul", {a, b}, out,
      [a = b.requires_grad() ? a : a.without_data(), b = a.requires_grad() ? b : b.without_data(),
       out = out.without_data(), pairs, m, n, k, fold, a_once, b_once]() mutable {
        const float* g = out.grad().data();
        // Folded, both products read all of dC: in bf16 mode it is rounded once for the two.
        thread_local std::vector<uint16_t> g16;
        const detail::Operand dc = (fold && a.requires_grad() && b.requires_grad())
                                       ? detail::pack_operand(g, pairs.size() * m, n, n, g16)
                                       : detail::Operand{g, n};
        if (a.requires_grad()) {  // dA = dC @ B^T
          const auto [ga, beta] = a_once ? a.grad_target() : Tensor::GradTarget{a.grad_data(), 1};
          if (fold)
            detail::gemm(false, true, pairs.size() * m, k, n, 1.0f, dc,
                         detail::Operand{b.data(), n}, beta, ga, k);
          else
            for (size_t i = 0; i < pairs.size(); ++i)
              gemm(false, true, m, k, n, g + i * m * n, b.data() + pairs[i].second, beta,
                   ga + pairs[i].first);
        }
        if (b.requires_grad()) {  // dB = A^T @ dC, summed over broadcast batch entries
          const auto [gb, beta] = b_once ? b.grad_target() : Tensor::GradTarget{b.grad_data(), 1};
          if (fold)
            detail::gemm(true, false, k, n, pairs.size() * m, 1.0f, detail::Operand{a.data(), k},
                         dc, beta, gb, n);
          else
            for (size_t i = 0; i < pairs.size(); ++i)
              gemm(true, false, k, n, m, a.data() + pairs[i].first, g + i * m * n, beta,
                   gb + pairs[i].second);
        }
      });
  return out;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const Shape sx = x.shape(), sw = weight.shape();
  if (sx.empty() || sw.size() != 2 || sw[1] != sx.back())
    throw std::invalid_argument("linear: input " + to_string(sx) + " does not fit weight " +
                                to_string(sw) + " (expected weight [out, " +
                                (sx.empty() ? std::string("?") : std::to_string(sx.back())) + "])");
  const size_t in = sw[1], outf = sw[0], rows = x.numel() / std::max<size_t>(in, 1);
  if (bias.defined() && bias.shape() != Shape{outf})
    throw std::invalid_argument("linear: bias " + to_string(bias.shape()) + " should be [" +
                                std::to_string(outf) + "] for weight " + to_string(sw));
  Shape out_shape = sx;
  out_shape.back() = outf;
  Tensor out = Tensor::empty(out_shape);
  float* y = out.data();
  if (bias.defined())
    detail::parallel_for(rows, 64, [&](size_t first, size_t last) {
      for (size_t r = first; r < last; ++r)
        std::copy(bias.data(), bias.data() + outf, y + r * outf);
    });
  // The weight's gradient reads x, the input's gradient the weight. In bf16 mode they read them
  // rounded to bf16: each is rounded once here, for this product and for backward, which keeps
  // those copies (x's in half the bytes, instead of x), as autocast saves its bf16 casts.
  const bool grad = needs_grad({&x, &weight, &bias});
  const bool bf16 = precision() == Precision::bf16;
  const bool save_x16 = grad && weight.requires_grad() && bf16;
  const bool save_w16 = grad && x.requires_grad() && bf16;
  std::shared_ptr<uint16_t[]> x16, w16;  // only when backward will read them
  detail::Operand xa{x.data(), in}, wa{weight.data(), in};
  if (save_x16) {
    x16 = std::make_unique_for_overwrite<uint16_t[]>(rows * in);
    xa = detail::pack_operand(x.data(), rows, in, in, x16.get());
  }
  if (save_w16) {
    w16 = std::make_unique_for_overwrite<uint16_t[]>(outf * in);
    wa = detail::pack_operand(weight.data(), outf, in, in, w16.get());
  }
  detail::gemm(false, true, rows, outf, in, 1.0f, xa, wa, bias.defined() ? 1.0f : 0.0f, y, outf);

  if (!grad) return out;
  std::vector<Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  const bool keep_x = weight.requires_grad() && !save_x16;
  record(
      "linear", std::move(inputs), out,
      [x = keep_x ? x : x.without_data(),
       weight = x.requires_grad() ? weight : weight.without_data(), bias = bias.without_data(),
       out = out.without_data(), x16 = std::move(x16), w16 = std::move(w16), rows, in,
       outf]() mutable {
        if ((x16 || w16) && precision() != Precision::bf16)
          throw std::logic_error(
              "linear: forward ran in bf16 and saved its operands in bf16, but backward runs in " +
              base::name_of(kPrecisionNames, precision()) +
              "; keep one precision from forward to backward");
        const float* g = out.grad().data();
        // Both products read the output gradient: in bf16 mode it is rounded once for the two.
        thread_local std::vector<uint16_t> g16;
        const detail::Operand dy = (x.requires_grad() && weight.requires_grad())
                                       ? detail::pack_operand(g, rows, outf, outf, g16)
                                       : detail::Operand{g, outf};
        if (x.requires_grad()) {
          const auto [gx, beta] = x.grad_target();
          detail::gemm(false, false, rows, in, outf, 1.0f, dy,
                       detail::Operand{weight.data(), in, w16.get()}, beta, gx, in);
        }
        if (weight.requires_grad()) {
          const auto [gw, beta] = weight.grad_target();
          detail::gemm(
              true, false, outf, in, rows, 1.0f, dy,
              x16 ? detail::Operand{nullptr, in, x16.get()} : detail::Operand{x.data(), in}, beta,
              gw, in);
        }
        if (bias.defined() && bias.requires_grad()) {
          float* gb_all = bias.grad_data();
          detail::parallel_for(outf, 64,
                               [&](size_t first, size_t last) {  // columns: fixed sum order
                                 float* __restrict gb = gb_all;
                                 for (size_t r = 0; r < rows; ++r) {
                                   const float* __restrict gr = g + r * outf;
                                   for (size_t j = first; j < last; ++j) gb[j] += gr[j];
                                 }
                               });
        }
      });
  return out;
}

}  // namespace tg
