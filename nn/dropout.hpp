// Dropout, active only in training mode. Modules of one model share one generator so that
// a single seed (and a single saved state) fixes every mask.
#pragma once

#include <memory>

#include "nn/module.hpp"

namespace tg::nn {

class Dropout : public Layer {
 public:
  Dropout(float p, std::shared_ptr<Generator> gen) : p_(p), gen_(std::move(gen)) {
    if (!(p >= 0.0f && p < 1.0f))
      throw std::invalid_argument("Dropout: probability " + std::to_string(p) +
                                  " is not in [0, 1)");
  }
  Tensor forward(const Tensor& x) const override { return dropout(x, p_, training(), *gen_); }
  float p() const { return p_; }
  Generator& generator() const { return *gen_; }

 private:
  float p_;
  std::shared_ptr<Generator> gen_;
};

}  // namespace tg::nn
