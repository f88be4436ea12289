#include "autograd/op_cases.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace tg::testing {

namespace {
Tensor causal_softmax(const Tensor& x) {
  return softmax(causal_mask(x), -1);
}
}  // namespace

namespace {
InputSpec spec(Shape shape, InputSpec::Kind kind, float scale = 1.0f, float mean = 0.0f,
               std::vector<float> values = {}) {
  InputSpec s;
  s.shape = std::move(shape), s.kind = kind, s.scale = scale, s.mean = mean,
  s.values = std::move(values);
  return s;
}
}  // namespace

InputSpec normal(Shape shape, float std, float mean) {
  return spec(std::move(shape), InputSpec::normal, std, mean);
}
InputSpec away_from_zero(Shape shape, float low) {
  return spec(std::move(shape), InputSpec::away_from_zero, low);
}
InputSpec positive(Shape shape) {
  return spec(std::move(shape), InputSpec::positive);
}
InputSpec separated(Shape shape) {
  return spec(std::move(shape), InputSpec::separated);
}
InputSpec constant(Shape shape, std::vector<float> values) {
  return spec(std::move(shape), InputSpec::constant, 0.0f, 0.0f, std::move(values));
}

CaseData make_inputs(const OpCase& c) {
  uint64_t seed = 1469598103934665603ull;  // FNV-1a of the name: one stream per case
  for (unsigned char ch : c.name) seed = (seed ^ ch) * 1099511628211ull;
  Generator gen(seed);
  CaseData data;
  for (const InputSpec& in : c.inputs) {
    Tensor t = Tensor::zeros(in.shape);
    const size_t n = t.numel();
    float* v = t.data();
    switch (in.kind) {
      case InputSpec::normal:
        for (size_t i = 0; i < n; ++i) v[i] = in.mean + in.scale * gen.normal();
        break;
      case InputSpec::away_from_zero:  // |x| in [low, 1.5): off kinks (relu) and poles (div)
        for (size_t i = 0; i < n; ++i)
          v[i] = (in.scale + (1.5f - in.scale) * gen.uniform()) * (gen.below(2) ? 1.0f : -1.0f);
        break;
      case InputSpec::positive:
        for (size_t i = 0; i < n; ++i) v[i] = 0.5f + 1.5f * gen.uniform();
        break;
      case InputSpec::separated: {  // distinct values 0.1 apart: the max is never a near-tie
        std::vector<size_t> order(n);
        for (size_t i = 0; i < n; ++i) order[i] = i;
        for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[gen.below(i)]);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(order[i]) * 0.1f - 1.0f;
        break;
      }
      case InputSpec::constant:
        if (in.values.size() != n)
          throw std::logic_error(c.name + ": constant input has the wrong number of values");
        std::copy(in.values.begin(), in.values.end(), v);
        break;
    }
    const bool differentiable = in.kind != InputSpec::constant;
    data.inputs.push_back(t.set_requires_grad(differentiable));
    data.differentiable.push_back(differentiable);
  }
  data.ids = c.ids;
  return data;
}

const std::vector<OpCase>& op_cases() {
  using V = const std::vector<Tensor>&;
  using I = const Ids&;
  const Ids repeated_ids({2, 5}, {1, 4, 1, 0, 5, 4, 4, 2, 1, 3});
  const Ids targets({2, 3}, {3, 0, 6, -100, 2, 6});
  static const std::vector<OpCase> cases = {
      {"add_same", {normal({3, 4}), normal({3, 4})}, [](V t, I) { return t[0] + t[1]; }},
      {"add_broadcast", {normal({2, 3, 4}), normal({4})}, [](V t, I) { return t[0] + t[1]; }},
      {"add_broadcast_both", {normal({3, 1}), normal({1, 4})}, [](V t, I) { return t[0] + t[1]; }},
      {"sub_broadcast", {normal({2, 3}), normal({2, 1})}, [](V t, I) { return t[0] - t[1]; }},
      {"mul_broadcast", {normal({2, 3, 4}), normal({3, 1})}, [](V t, I) { return t[0] * t[1]; }},
      {"div_broadcast",
       {normal({3, 4}), away_from_zero({4}, 0.5f)},
       [](V t, I) { return t[0] / t[1]; }},
      {"neg", {normal({3, 4})}, [](V t, I) { return -t[0]; }},
      {"add_scalar", {normal({3, 4})}, [](V t, I) { return t[0] + 2.5f; }},
      {"mul_scalar", {normal({3, 4})}, [](V t, I) { return t[0] * -1.5f; }},
      {"pow", {positive({3, 4})}, [](V t, I) { return pow(t[0], 2.5f); }},
      {"exp", {normal({3, 4})}, [](V t, I) { return exp(t[0]); }},
      {"log", {positive({3, 4})}, [](V t, I) { return log(t[0]); }},
      {"sqrt", {positive({3, 4})}, [](V t, I) { return sqrt(t[0]); }},
      {"tanh", {normal({3, 4})}, [](V t, I) { return tanh(t[0]); }},
      {"sigmoid", {normal({3, 4})}, [](V t, I) { return sigmoid(t[0]); }},
      {"relu", {away_from_zero({3, 4})}, [](V t, I) { return relu(t[0]); }},
      {"gelu", {normal({3, 4})}, [](V t, I) { return gelu(t[0]); }},
      {"matmul_2d", {normal({3, 4}), normal({4, 5})}, [](V t, I) { return matmul(t[0], t[1]); }},
      {"matmul_batched",
       {normal({2, 3, 4}), normal({2, 4, 5})},
       [](V t, I) { return matmul(t[0], t[1]); }},
      {"matmul_broadcast",
       {normal({2, 1, 3, 4}), normal({3, 4, 2})},
       [](V t, I) { return matmul(t[0], t[1]); }},
      {"matmul_shared_rhs",
       {normal({2, 3, 4}), normal({4, 5})},
       [](V t, I) { return matmul(t[0], t[1]); }},
      {"linear",
       {normal({2, 3, 4}), normal({5, 4}), normal({5})},
       [](V t, I) { return linear(t[0], t[1], t[2]); }},
      {"linear_nobias",
       {normal({3, 4}), normal({5, 4})},
       [](V t, I) { return linear(t[0], t[1]); }},
      {"reshape",
       {normal({2, 3, 4})},
       [](V t, I) {
         return reshape(t[0], {6, -1});
       }},
      {"permute",
       {normal({2, 3, 4})},
       [](V t, I) {
         return permute(t[0], {2, 0, 1});
       }},
      {"transpose", {normal({2, 3, 4})}, [](V t, I) { return transpose(t[0], 1, 2); }},
      {"narrow", {normal({3, 5, 2})}, [](V t, I) { return narrow(t[0], 1, 1, 3); }},
      {"concat",
       {normal({2, 3}), normal({2, 1}), normal({2, 2})},
       [](V t, I) { return concat(t, 1); }},
      {"stack_middle",
       {normal({2, 3}), normal({2, 3}), normal({2, 3})},
       [](V t, I) { return stack(t, 1); }},
      {"stack_last", {normal({2, 3}), normal({2, 3})}, [](V t, I) { return stack(t, -1); }},
      // Each piece scaled differently, so that a gradient sent to the wrong piece shows.
      {"chunk_uneven",
       {normal({2, 7, 2})},
       [](V t, I) {
         std::vector<Tensor> pieces = chunk(t[0], 3, 1);  // 3 + 3 + 1 rows
         for (size_t i = 0; i < pieces.size(); ++i)
           pieces[i] = pieces[i] * static_cast<float>(i + 1);
         return concat(pieces, 1);
       }},
      {"unbind",
       {normal({2, 3, 4})},
       [](V t, I) {
         std::vector<Tensor> slices = unbind(t[0], 1);
         for (size_t i = 0; i < slices.size(); ++i)
           slices[i] = slices[i] * static_cast<float>(i + 1);
         return stack(slices, 0);
       }},
      {"sum_all", {normal({2, 3, 4})}, [](V t, I) { return sum(t[0]); }},
      {"sum_axes_keepdim",
       {normal({2, 3, 4})},
       [](V t, I) {
         return sum(t[0], {0, 2}, true);
       }},
      {"mean_axis", {normal({2, 3, 4})}, [](V t, I) { return mean(t[0], {1}); }},
      {"max_axis", {separated({3, 5})}, [](V t, I) { return max(t[0], 1); }},
      {"max_axis0_keepdim", {separated({4, 3})}, [](V t, I) { return max(t[0], 0, true); }},
      {"softmax_last", {normal({3, 5})}, [](V t, I) { return softmax(t[0], -1); }},
      {"softmax_axis0", {normal({3, 4, 2})}, [](V t, I) { return softmax(t[0], 0); }},
      {"log_softmax_last", {normal({3, 5})}, [](V t, I) { return log_softmax(t[0], -1); }},
      {"log_softmax_axis1", {normal({2, 4, 3})}, [](V t, I) { return log_softmax(t[0], 1); }},
      // Gates [B, 4H] and the cell state; h and c scaled apart so that a gradient sent to the
      // wrong output shows.
      {"lstm_cell",
       {normal({3, 8}), normal({3, 2})},
       [](V t, I) {
         const auto [h, c] = lstm_cell(t[0], t[1]);
         return concat({h, c * 2.0f}, 1);
       }},
      // Two steps: the second reads the first's c, so c's gradient has two consumers.
      {"lstm_cell_two_steps",
       {normal({2, 8}), normal({2, 8}), normal({2, 2})},
       [](V t, I) {
         const auto [h1, c1] = lstm_cell(t[0], t[2]);
         const auto [h2, c2] = lstm_cell(t[1] + concat({h1, h1, h1, h1}, 1), c1);
         return concat({h1, h2 * 2.0f, c2 * 3.0f}, 1);
       }},
      {"layer_norm",
       {normal({2, 3, 8}), normal({8}, 0.1f, 1.0f), normal({8}, 0.1f)},
       [](V t, I) { return layer_norm(t[0], t[1], t[2], 1e-5f); }},
      {"embedding",
       {normal({6, 4})},
       [](V t, I ids) { return embedding(t[0], ids); },
       repeated_ids},
      {"embedding_sparse",
       {normal({6, 4})},
       [](V t, I ids) { return embedding(t[0], ids, /*sparse_grad=*/true); },
       repeated_ids},
      {"masked_fill",
       {normal({3, 4}), constant({1, 4}, {0, 1, 0, 1})},
       [](V t, I) { return masked_fill(t[0], t[1], -5.0f); }},
      {"causal_softmax", {normal({2, 4, 4})}, [](V t, I) { return causal_softmax(t[0]); }},
      {"causal_softmax_wide", {normal({2, 3, 5})}, [](V t, I) { return causal_softmax(t[0]); }},
      {"cross_entropy",
       {normal({2, 3, 7})},
       [](V t, I ids) { return cross_entropy(t[0], ids); },
       targets},
      {"linear_cross_entropy",
       {normal({2, 3, 4}), normal({7, 4}), normal({7})},
       [](V t, I ids) { return linear_cross_entropy(t[0], t[1], t[2], ids); },
       targets},
      {"causal_attention",
       {normal({2, 5, 12})},
       [](V t, I) {
         Generator unused(0);
         return causal_attention(t[0], 2, 0.0f, true, unused);
       }},
      {"causal_attention_separate",
       {normal({2, 5, 4}), normal({2, 5, 4}), normal({2, 5, 4})},
       [](V t, I) {
         Generator unused(0);
         return causal_attention(t[0], t[1], t[2], 2, 0.0f, true, unused);
       }},
      // Two heads of width 4: q and k rotated pair by pair, v passed through.
      {"rotary_qk", {normal({2, 5, 24})}, [](V t, I) { return rotary_qk(t[0], 2); }},
      // 70 query rows: two strips of the row-blocked kernel (64 + 6), the second seeing keys
      // the first strip's rows do not.
      {"causal_attention_strips",
       {normal({1, 70, 12})},
       [](V t, I) {
         Generator unused(0);
         return causal_attention(t[0], 2, 0.0f, true, unused);
       }},
  };
  return cases;
}

const OpCase& op_case(const std::string& name) {
  for (const auto& c : op_cases())
    if (c.name == name) return c;
  throw std::out_of_range("no C++ op case named " + name);
}

std::vector<std::string> op_case_names() {
  std::vector<std::string> names;
  for (const auto& c : op_cases()) names.push_back(c.name);
  return names;
}

CaseData load_case(const TensorFile& golden, const std::string& name) {
  CaseData data;
  for (size_t i = 0;; ++i) {
    const std::string key = name + "/in" + std::to_string(i);
    if (!golden.tensors.count(key)) break;
    const bool differentiable = golden.tensors.count(name + "/grad" + std::to_string(i)) > 0;
    data.inputs.push_back(golden.tensor(key).clone().set_requires_grad(differentiable));
    data.differentiable.push_back(differentiable);
  }
  if (data.inputs.empty()) throw std::runtime_error("golden file has no inputs for case " + name);
  if (golden.ids.count(name + "/ids")) data.ids = golden.id_array(name + "/ids");
  return data;
}

const TensorFile& golden_ops() {
  static const TensorFile file = load_safetensors(TAPEGRAD_GOLDEN_DIR "/ops.safetensors");
  return file;
}

const TensorFile& golden_block() {
  static const TensorFile file = load_safetensors(TAPEGRAD_GOLDEN_DIR "/block.safetensors");
  return file;
}

void check_close(const std::string& what, const Array& got, const Array& want, double atol,
                 double rtol) {
  const Comparison c = compare(got, want, atol, rtol);
  BOOST_TEST_MESSAGE(what << ": max |diff| = " << c.max_abs_diff);
  BOOST_TEST(c.ok, what << " differs from the reference at " << c.where);
}

}  // namespace tg::testing

namespace tg::testing {

std::map<std::string, Tensor> block_params(const TensorFile& golden) {
  std::map<std::string, Tensor> params;
  for (const auto& [key, t] : golden.tensors)
    if (key.rfind("param/", 0) == 0) params[key.substr(6)] = t.clone().set_requires_grad(true);
  return params;
}

Tensor block_loss(const std::map<std::string, Tensor>& p, const Ids& ids, const Ids& targets) {
  const long b = static_cast<long>(ids.shape[0]), t = static_cast<long>(ids.shape[1]);
  const long c = kBlockWidth, h = kBlockHeads, d = c / h;
  auto at = [&](const std::string& k) -> const Tensor& { return p.at(k); };
  auto heads = [&](const Tensor& z) { return permute(reshape(z, {b, t, h, d}), {0, 2, 1, 3}); };
  Tensor x = embedding(at("wte"), ids) + narrow(at("wpe"), 0, 0, static_cast<size_t>(t));
  for (size_t l = 0; l < kBlockLayers; ++l) {
    const std::string n = "h" + std::to_string(l) + ".";
    Tensor hn = layer_norm(x, at(n + "ln1.w"), at(n + "ln1.b"));
    Tensor qkv = linear(hn, at(n + "qkv.w"), at(n + "qkv.b"));
    Tensor q = heads(narrow(qkv, 2, 0, c)), k = heads(narrow(qkv, 2, c, c)),
           v = heads(narrow(qkv, 2, 2 * c, c));
    Tensor att =
        softmax(causal_mask(matmul(q, transpose(k, -2, -1)) * (1.0f / std::sqrt(float(d)))), -1);
    Tensor y = reshape(permute(matmul(att, v), {0, 2, 1, 3}), {b, t, c});
    x = x + linear(y, at(n + "proj.w"), at(n + "proj.b"));
    hn = layer_norm(x, at(n + "ln2.w"), at(n + "ln2.b"));
    hn = gelu(linear(hn, at(n + "fc.w"), at(n + "fc.b")));
    x = x + linear(hn, at(n + "fcproj.w"), at(n + "fcproj.b"));
  }
  x = layer_norm(x, at("lnf.w"), at("lnf.b"));
  return cross_entropy(linear(x, at("wte")), targets);  // tied: wte is also the output matrix
}

ForwardBackward forward_backward(const std::vector<Shape>& shapes,
                                 const std::function<Tensor(std::vector<Tensor>&)>& op,
                                 uint64_t seed, float std) {
  Generator gen(seed);
  std::vector<Tensor> inputs;
  for (const Shape& s : shapes) inputs.push_back(randn(s, gen, std, true));
  Tensor y = op(inputs);
  Tensor weights = randn(y.shape(), gen);
  backward(sum(mul(y, weights)));
  ForwardBackward r{{y.data(), y.data() + y.numel()}, {}};
  for (const Tensor& t : inputs) {
    const Array g = t.dense_grad();
    r.grads.emplace_back(g.begin(), g.end());
  }
  return r;
}

}  // namespace tg::testing
