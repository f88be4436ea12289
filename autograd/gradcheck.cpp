#include "autograd/gradcheck.hpp"

#include <cmath>
#include <sstream>

#include "autograd/random.hpp"
#include "autograd/tape.hpp"

namespace tg {

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  std::vector<Tensor> xs = inputs;
  for (auto& x : xs) x.zero_grad();

  const Tensor out = f(xs);
  Generator gen(options.seed);
  const Tensor projection = rand_uniform(out.shape(), gen, -1.0f, 1.0f);
  backward(out, projection);

  auto objective = [&]() {
    NoGrad no_grad;
    const Tensor y = f(xs);
    double total = 0.0;
    for (size_t i = 0; i < y.numel(); ++i)
      total += static_cast<double>(y.data()[i]) * projection.data()[i];
    return total;
  };

  GradcheckResult result;
  double worst_excess = -1.0;
  for (size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].requires_grad()) continue;
    const Array analytic = xs[k].dense_grad();
    float* x = xs[k].data();
    const size_t n = xs[k].numel();
    double squares = 0.0;
    for (size_t i = 0; i < n; ++i) squares += static_cast<double>(x[i]) * x[i];
    const float rms = n ? static_cast<float>(std::sqrt(squares / static_cast<double>(n))) : 0.0f;
    // The central difference at step h, with the perturbation float rounding really made.
    const auto numeric_at = [&](size_t i, float h) {
      const float saved = x[i];
      x[i] = saved + h;
      const double up = objective();
      x[i] = saved - h;
      const double down = objective();
      x[i] = saved;
      return (up - down) / (static_cast<double>(saved + h) - static_cast<double>(saved - h));
    };
    for (size_t i = 0; i < n; ++i) {
      float h = options.step * std::max(std::fabs(x[i]), rms);
      if (!(h > 0)) h = options.step;  // an all-zero input
      const double got = analytic.data()[i];
      const auto allowed_for = [&](double numeric) {
        return options.atol + options.rtol * std::max(std::fabs(numeric), std::fabs(got));
      };
      const double coarse = numeric_at(i, h);
      double numeric = coarse, error = std::fabs(coarse - got);
      bool unreliable = false;
      if (error > allowed_for(coarse)) {
        const double fine = numeric_at(i, h / 10);
        if (std::fabs(fine - got) < error) {
          numeric = fine;
          error = std::fabs(fine - got);
        }
        unreliable = std::fabs(fine - coarse) > allowed_for(fine);
      }
      const double allowed = allowed_for(numeric);
      result.max_abs_error = std::max(result.max_abs_error, error);
      if (error - allowed > worst_excess) {
        worst_excess = error - allowed;
        std::ostringstream msg;
        msg << "input " << k << " " << to_string(xs[k].shape()) << " element " << i << ": analytic "
            << got << " vs numeric " << numeric << " (|diff| " << error << ", allowed " << allowed
            << ")";
        if (unreliable)
          msg << "; the numeric estimates at steps " << h << " and " << h / 10
              << " disagree too: float rounding limits the finite difference here, try another "
                 "GradcheckOptions::step";
        result.report = msg.str();
      }
      if (error > allowed) result.ok = false;
    }
  }
  if (result.ok)
    result.report = "max |analytic - numeric| = " + std::to_string(result.max_abs_error);
  else
    result.report = "gradient mismatch at " + result.report;
  return result;
}

Comparison compare(const Array& got, const Array& want, double atol, double rtol) {
  Comparison c{true, 0.0, ""};
  if (got.shape() != want.shape()) {
    std::ostringstream msg;
    msg << "shape mismatch: got " << got.size() << " values, want " << want.size();
    return {false, INFINITY, msg.str()};
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got.data()[i], w = want.data()[i];
    if (std::isinf(w) && g == w) continue;
    const double diff = std::fabs(g - w);
    if (!(diff <= c.max_abs_diff)) c.max_abs_diff = diff;  // NaN propagates as a failure
    if (!(diff <= atol + rtol * std::fabs(w))) {
      if (c.ok)
        c.where = "index " + std::to_string(i) + ": got " + std::to_string(g) + ", want " +
                  std::to_string(w);
      c.ok = false;
    }
  }
  return c;
}

}  // namespace tg
