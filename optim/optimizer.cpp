#include "optim/optimizer.hpp"

#include "autograd/parallel.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <vector>

namespace tg::optim {

namespace {
// p -= wd-decayed Adam step on `n` contiguous elements (dense rule of torch.optim.Adam[W]).
// The update of elements [first, last), a separate function so that the compiler sees
// restrict pointers and constants in registers: inside the lambda below, captured by
// reference, every constant was re-read after each store and the loop stayed scalar.
void adam_block(float* __restrict p, const float* __restrict g, float* __restrict m,
                float* __restrict v, size_t first, size_t last, float beta1, float beta2, float eps,
                float step_size, float bc2_sqrt, float decay_factor, float l2) {
  for (size_t i = first; i < last; ++i) {
    const float grad = g[i] + l2 * p[i];
    const float param = p[i] * decay_factor;
    const float m_new = beta1 * m[i] + (1.0f - beta1) * grad;
    const float v_new = beta2 * v[i] + (1.0f - beta2) * grad * grad;
    m[i] = m_new;
    v[i] = v_new;
    p[i] = param - step_size * m_new / (std::sqrt(v_new) / bc2_sqrt + eps);
  }
}

void adam_update(float* p, const float* g, float* m, float* v, size_t n, const AdamOptions& o,
                 float lr, float weight_decay, bool decoupled, long step) {
  const float bc1 = 1.0f - std::pow(o.beta1, static_cast<float>(step));
  const float bc2_sqrt = std::sqrt(1.0f - std::pow(o.beta2, static_cast<float>(step)));
  const float step_size = lr / bc1;
  // AdamW decays the parameter (decoupled); Adam adds weight_decay * p to the gradient (L2).
  // The unused one is an exact identity: x * 1 and g + 0 * p.
  const float decay_factor = decoupled ? 1.0f - lr * weight_decay : 1.0f;
  const float l2 = decoupled ? 0.0f : weight_decay;
  detail::parallel_for(n, 16384, [&](size_t first, size_t last) {
    adam_block(p, g, m, v, first, last, o.beta1, o.beta2, o.eps, step_size, bc2_sqrt, decay_factor,
               l2);
  });
}
}  // namespace

std::vector<ParamGroup> single_group(const nn::Module& model, float weight_decay) {
  ParamGroup group;
  group.weight_decay = weight_decay;
  for (const auto& [name, t] : model.named_parameters())
    if (t.requires_grad()) group.params.push_back({name, t});
  return {group};
}

std::vector<ParamGroup> decay_groups(const nn::Module& model, float weight_decay,
                                     TableDecay tables) {
  ParamGroup decay, no_decay;
  decay.weight_decay = weight_decay;
  const auto table_decays = [tables](nn::ParamRole role) {
    if (role == nn::ParamRole::embedding) return tables == TableDecay::all;
    if (role == nn::ParamRole::unembedding) return tables != TableDecay::none;
    return true;
  };
  for (const auto& p : model.parameters_with_roles()) {
    if (!p.tensor.requires_grad()) continue;
    const bool decays = p.tensor.dim() >= 2 && table_decays(p.role);
    (decays ? decay : no_decay).params.push_back({p.name, p.tensor});
  }
  return {decay, no_decay};
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, float lr)
    : groups_(std::move(groups)), lr_(lr) {
  if (!(lr >= 0.0f))
    throw std::invalid_argument("optimizer: learning rate must be >= 0, got " + std::to_string(lr));
}

void Optimizer::zero_grad() {
  for (auto& g : groups_)
    for (auto& p : g.params) p.tensor.zero_grad();
}

Tensor& Optimizer::slot(const std::string& slot_name, const NamedParam& p) {
  const std::string key = slot_name + "." + p.name;
  for (auto& [k, t] : slots_)
    if (k == key) return t;
  if (const auto kinds = state_kinds(); std::ranges::find(kinds, slot_name) == kinds.end())
    throw std::logic_error(std::string(name()) + ": state '" + slot_name +
                           "' is not among its state_kinds()");
  slots_.emplace_back(key, Tensor::zeros(p.tensor.shape()));
  return slots_.back().second;
}

void Optimizer::save_state(TensorFile& file, const std::string& prefix) const {
  for (const auto& [key, t] : slots_) file.tensors[prefix + key] = t;
  file.metadata[prefix + "steps"] = std::to_string(steps_);
  file.metadata[prefix + "name"] = name();
}

void Optimizer::load_state(const TensorFile& file, const std::string& prefix) {
  auto it = file.metadata.find(prefix + "name");
  if (it == file.metadata.end() || it->second != name())
    throw std::runtime_error("checkpoint holds optimizer state of '" +
                             (it == file.metadata.end() ? std::string("none") : it->second) +
                             "', not '" + name() + "'");
  slots_.clear();
  for (const auto& [key, t] : file.tensors) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string rest = key.substr(prefix.size());
    const std::string kind = rest.substr(0, rest.find('.'));
    const std::string param = rest.substr(rest.find('.') + 1);
    if (const auto kinds = state_kinds(); std::ranges::find(kinds, kind) == kinds.end()) {
      std::string kept;
      for (const std::string& k : kinds) kept += (kept.empty() ? "" : ", ") + k;
      throw std::runtime_error("checkpoint optimizer entry '" + key + "' is state '" + kind +
                               "', which " + name() + " does not keep (it keeps " +
                               (kept.empty() ? std::string("none") : kept) + ")");
    }
    const NamedParam* owner = nullptr;
    for (const auto& g : groups_)
      for (const auto& p : g.params)
        if (p.name == param) owner = &p;
    if (!owner)
      throw std::runtime_error("checkpoint optimizer entry '" + key +
                               "' names no trainable parameter");
    if (owner->tensor.shape() != t.shape())
      throw std::runtime_error("checkpoint optimizer entry '" + key + "' has shape " +
                               to_string(t.shape()) + " but the parameter has " +
                               to_string(owner->tensor.shape()));
    slots_.emplace_back(rest, t.clone());
  }
  // Every parameter with state has every kind of state the file holds (a missing exp_avg_sq
  // would resume with it reset: a run that silently differs from the uninterrupted one).
  std::set<std::string> kinds, params;
  for (const auto& [key, t] : slots_)
    kinds.insert(key.substr(0, key.find('.'))), params.insert(key.substr(key.find('.') + 1));
  for (const std::string& param : params)
    for (const std::string& kind : kinds)
      if (std::ranges::none_of(slots_,
                               [&](const auto& s) { return s.first == kind + "." + param; }))
        throw std::runtime_error("checkpoint optimizer state lacks '" + prefix + kind + "." +
                                 param + "' (it holds the other state of that parameter)");
  const auto steps = file.metadata.find(prefix + "steps");
  const std::string text = steps == file.metadata.end() ? "none" : steps->second;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || n < 0 || errno == ERANGE)
    throw std::runtime_error("checkpoint optimizer step count '" + text +
                             "' is not a whole number of steps");
  steps_ = static_cast<long>(n);
}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : Optimizer(std::move(groups), options.lr), options_(options) {}

void SGD::step() {
  NoGrad no_grad;
  ++steps_;
  for (auto& group : groups_)
    for (auto& p : group.params) {
      if (!p.tensor.has_grad()) continue;
      Array grad = p.tensor.dense_grad();
      float* w = p.tensor.data();
      float* g = grad.data();
      const size_t n = p.tensor.numel();
      for (size_t i = 0; i < n; ++i) g[i] += group.weight_decay * w[i];
      if (options_.momentum != 0.0f) {
        const bool first = steps_ == 1;
        float* buf = slot("momentum_buffer", p).data();
        for (size_t i = 0; i < n; ++i)
          g[i] = buf[i] = first ? g[i] : options_.momentum * buf[i] + g[i];
      }
      for (size_t i = 0; i < n; ++i) w[i] -= lr_ * g[i];
    }
}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled)
    : Optimizer(std::move(groups), options.lr), options_(options), decoupled_(decoupled) {}

void Adam::step() {
  NoGrad no_grad;
  ++steps_;
  for (auto& group : groups_)
    for (auto& p : group.params) {
      if (!p.tensor.has_grad()) continue;
      // A purely dense gradient is read in place; only a sparse part needs the merged copy.
      const SparseGrad* sparse = p.tensor.sparse_grad();
      const bool dense_only = p.tensor.has_dense_grad() && (!sparse || sparse->rows.empty());
      const Array merged = dense_only ? Array() : p.tensor.dense_grad();
      adam_update(p.tensor.data(), dense_only ? p.tensor.grad().data() : merged.data(),
                  slot("exp_avg", p).data(), slot("exp_avg_sq", p).data(), p.tensor.numel(),
                  options_, lr_, group.weight_decay, decoupled_, steps_);
    }
}

LazyAdam::LazyAdam(std::vector<ParamGroup> groups, AdamOptions options)
    : Optimizer(std::move(groups), options.lr), options_(options) {}

void LazyAdam::step() {
  NoGrad no_grad;
  ++steps_;
  const float bc1 = 1.0f - std::pow(options_.beta1, static_cast<float>(steps_));
  const float bc2 = 1.0f - std::pow(options_.beta2, static_cast<float>(steps_));
  const float step_size = lr_ * std::sqrt(bc2) / bc1;
  for (auto& group : groups_)
    for (auto& p : group.params) {
      if (!p.tensor.has_grad()) continue;
      float* m = slot("exp_avg", p).data();
      float* v = slot("exp_avg_sq", p).data();
      const SparseGrad* sparse = p.tensor.sparse_grad();
      if (p.tensor.has_dense_grad() || !sparse) {
        const Array grad = p.tensor.dense_grad();
        adam_update(p.tensor.data(), grad.data(), m, v, p.tensor.numel(), options_, lr_,
                    group.weight_decay, true, steps_);
        continue;
      }
      const size_t width = p.tensor.numel() / p.tensor.size(0);
      float* w = p.tensor.data();
      for (size_t r = 0; r < sparse->rows.size(); ++r) {
        const size_t base = static_cast<size_t>(sparse->rows[r]) * width;
        const float* g = sparse->values.data() + r * width;
        for (size_t j = 0; j < width; ++j) {
          const size_t i = base + j;
          w[i] *= 1.0f - lr_ * group.weight_decay;
          m[i] += (g[j] - m[i]) * (1.0f - options_.beta1);
          v[i] += (g[j] * g[j] - v[i]) * (1.0f - options_.beta2);
          w[i] -= step_size * m[i] / (std::sqrt(v[i]) + options_.eps);
        }
      }
    }
}

namespace {
// Sums of squares of N consecutive chunks of `length` values, each chunk in order. A chunk's sum
// is one chain of double adds, each waiting for the one before; N chunks' chains overlap.
template <size_t N>
void chunk_sums_of_squares(const float* g, size_t length, double* sums) {
  double s[N] = {};
  for (size_t i = 0; i < length; ++i)
    for (size_t k = 0; k < N; ++k) {
      const float x = g[k * length + i];
      s[k] += static_cast<double>(x) * x;
    }
  std::copy_n(s, N, sums);
}
}  // namespace

float clip_grad_norm(const std::vector<Tensor>& params, float max_norm) {
  // Sums of squares over fixed chunks, in parallel, then added in chunk order: the norm does
  // not depend on the thread count. Full chunks go kSideBy at a time.
  constexpr size_t kChunk = size_t{1} << 15, kSideBy = 4;
  double total = 0.0;
  auto accumulate = [&](const float* g, size_t n) {
    std::vector<double> partial((n + kChunk - 1) / kChunk, 0.0);
    detail::parallel_for(partial.size(), 1, [&](size_t first, size_t last) {
      size_t c = first;
      for (; c + kSideBy <= last && (c + kSideBy) * kChunk <= n; c += kSideBy)
        chunk_sums_of_squares<kSideBy>(g + c * kChunk, kChunk, &partial[c]);
      for (; c < last; ++c)
        chunk_sums_of_squares<1>(g + c * kChunk, std::min(n, (c + 1) * kChunk) - c * kChunk,
                                 &partial[c]);
    });
    for (double s : partial) total += s;
  };
  for (const auto& p : params) {
    if (p.has_dense_grad()) accumulate(p.grad().data(), p.grad().size());
    if (const SparseGrad* s = p.sparse_grad()) accumulate(s->values.data(), s->values.size());
  }
  const float norm = static_cast<float>(std::sqrt(total));
  const float coef = max_norm / (norm + 1e-6f);
  if (coef >= 1.0f) return norm;
  for (const auto& p : params) {
    if (p.has_dense_grad()) {
      float* g = p.grad_data();
      detail::parallel_for(p.numel(), 1 << 14, [&](size_t first, size_t last) {
        for (size_t i = first; i < last; ++i) g[i] *= coef;
      });
    }
    if (p.sparse_grad())
      for (auto& x : p.sparse_grad_mut().values) x *= coef;
  }
  return norm;
}

}  // namespace tg::optim
