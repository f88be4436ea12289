#include "autograd/random.hpp"

#include <cmath>
#include <stdexcept>

namespace tg {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

void Generator::reseed(uint64_t seed) {
  uint64_t x = seed;
  for (auto& word : s_) word = splitmix64(x);
  has_spare_ = false;
}

void Generator::set_state(const State& st) {
  for (int i = 0; i < 4; ++i) s_[i] = st.s[i];
  has_spare_ = st.has_spare;
  spare_ = st.spare;
}

uint64_t Generator::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

float Generator::uniform() {
  return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f;
}
double Generator::uniform_double() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

float Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform_double();
  while (u1 <= 0.0) u1 = uniform_double();
  const double u2 = uniform_double();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * M_PI * u2;
  spare_ = static_cast<float>(radius * std::sin(angle));
  has_spare_ = true;
  return static_cast<float>(radius * std::cos(angle));
}

uint64_t Generator::below(uint64_t bound) {
  if (bound == 0) throw std::invalid_argument("Generator::below: bound must be positive");
  // Rejection sampling removes the modulo bias.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do x = next_u64();
  while (x >= limit);
  return x % bound;
}

Tensor randn(const Shape& shape, Generator& gen, float std, bool requires_grad) {
  Tensor t = Tensor::empty(shape);
  float* v = t.data();
  for (size_t i = 0, n = t.numel(); i < n; ++i) v[i] = std * gen.normal();
  return t.set_requires_grad(requires_grad);
}

Tensor rand_uniform(const Shape& shape, Generator& gen, float low, float high, bool requires_grad) {
  Tensor t = Tensor::empty(shape);
  float* v = t.data();
  for (size_t i = 0, n = t.numel(); i < n; ++i) v[i] = low + (high - low) * gen.uniform();
  return t.set_requires_grad(requires_grad);
}

}  // namespace tg
