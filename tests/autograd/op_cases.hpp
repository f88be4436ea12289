// One case per op: a name, the inputs' shapes and value ranges, the function. The
// finite-difference gradient check draws each case's inputs here (seeded by the case's name,
// so adding a case changes no other case); the PyTorch parity test uses the inputs and values
// that tests/reference/make_golden.py stored for the case of the same name, when it has one.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"

namespace tg::testing {

using OpFunction = std::function<Tensor(const std::vector<Tensor>&, const Ids&)>;

// How to draw one input: its shape and value range. Constant inputs (masks) get no gradient.
struct InputSpec {
  enum Kind { normal, away_from_zero, positive, separated, constant };
  Shape shape;
  Kind kind = normal;
  float scale = 1.0f;  // normal: std; away_from_zero: the smallest |x|
  float mean = 0.0f;
  std::vector<float> values;  // constant
};
InputSpec normal(Shape shape, float std = 1.0f, float mean = 0.0f);
InputSpec away_from_zero(Shape shape, float low = 0.2f);  // |x| in [low, 1.5)
InputSpec positive(Shape shape);                          // in [0.5, 2)
InputSpec separated(Shape shape);                         // distinct, 0.1 apart
InputSpec constant(Shape shape, std::vector<float> values);

struct OpCase {
  OpCase(std::string name_, std::vector<InputSpec> inputs_, OpFunction f_, Ids ids_ = Ids())
      : name(std::move(name_)),
        inputs(std::move(inputs_)),
        f(std::move(f_)),
        ids(std::move(ids_)) {}
  std::string name;
  std::vector<InputSpec> inputs;
  OpFunction f;
  Ids ids;  // for ops that take ids (embedding) or targets (cross-entropy)
};

const std::vector<OpCase>& op_cases();
const OpCase& op_case(const std::string& name);
std::vector<std::string> op_case_names();

struct CaseData {
  std::vector<Tensor> inputs;
  std::vector<bool> differentiable;
  Ids ids;
};
// The case's inputs drawn from its specs, with requires_grad on all but the constants.
CaseData make_inputs(const OpCase& c);
// The inputs of a golden case, with requires_grad set where the golden file has a gradient.
CaseData load_case(const TensorFile& golden, const std::string& name);

// The inputs of the composite block test: parameters in a fixed order, ids and targets.
const TensorFile& golden_ops();
const TensorFile& golden_block();

// compare() as a Boost.Test check that logs the max difference under `what`.
void check_close(const std::string& what, const Array& got, const Array& want, double atol,
                 double rtol);

}  // namespace tg::testing

namespace tg::testing {
// The composite of make_golden.py: a 2-layer GPT-style stack (causal self-attention, layer
// norm, GELU MLP, tied output projection) and its cross-entropy loss, built from ops only.
constexpr size_t kBlockWidth = 8, kBlockHeads = 2, kBlockLayers = 2;
Tensor block_loss(const std::map<std::string, Tensor>& params, const Ids& ids, const Ids& targets);
std::map<std::string, Tensor> block_params(const TensorFile& golden);  // "param/<name>" entries
// An op's output and its inputs' gradients: inputs drawn N(0, std^2) from Generator(seed),
// backward from a fixed random weighting of the output (drawn after the inputs). For suites
// that run the same op in two settings (thread counts, precisions) and compare.
struct ForwardBackward {
  std::vector<float> out;
  std::vector<std::vector<float>> grads;
};
ForwardBackward forward_backward(const std::vector<Shape>& shapes,
                                 const std::function<Tensor(std::vector<Tensor>&)>& op,
                                 uint64_t seed, float std);

}  // namespace tg::testing
