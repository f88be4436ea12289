#include "nn/linear.hpp"

#include <cmath>

namespace tg::nn {

Linear::Linear(size_t in, size_t out, Generator& gen, LinearOptions options) {
  if (in == 0 || out == 0)
    throw std::invalid_argument("Linear: sizes must be positive, got in=" + std::to_string(in) +
                                " out=" + std::to_string(out));
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  weight_ =
      register_parameter("weight", rand_uniform({out, in}, gen, -bound, bound, true), options.role);
  if (options.bias)
    bias_ =
        register_parameter("bias", rand_uniform({out}, gen, -bound, bound, true), ParamRole::bias);
}

}  // namespace tg::nn
