// A small deterministic random generator (xoshiro256**, seeded with splitmix64) whose
// uniform and normal streams are identical on every platform and standard library, so that
// the same seed gives the same initialisation, dropout masks and batches everywhere.
#pragma once

#include <cstdint>

#include "autograd/tensor.hpp"

namespace tg {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed);
  uint64_t next_u64();
  float uniform();                 // [0, 1)
  double uniform_double();         // [0, 1), 53 random bits
  float normal();                  // standard normal (Box-Muller)
  uint64_t below(uint64_t bound);  // uniform integer in [0, bound), bound > 0

  struct State {
    uint64_t s[4];
    bool has_spare;
    float spare;
  };
  State state() const { return {{s_[0], s_[1], s_[2], s_[3]}, has_spare_, spare_}; }
  void set_state(const State& st);

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  float spare_ = 0.0f;
};

Tensor randn(const Shape& shape, Generator& gen, float std = 1.0f, bool requires_grad = false);
Tensor rand_uniform(const Shape& shape, Generator& gen, float low, float high,
                    bool requires_grad = false);

}  // namespace tg
