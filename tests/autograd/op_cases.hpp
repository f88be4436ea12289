// The C++ side of the op cases in tests/reference/make_golden.py: same names, same
// functions. Used by the PyTorch parity test (against the golden values) and by the
// finite-difference gradient check (on the same inputs).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"

namespace tg::testing {

using OpFunction = std::function<Tensor(const std::vector<Tensor>&, const Ids&)>;

struct OpCase {
  std::string name;
  OpFunction f;
};

const std::vector<OpCase>& op_cases();
const OpCase& op_case(const std::string& name);
std::vector<std::string> op_case_names();

// The inputs of a golden case, with requires_grad set where the golden file has a gradient.
struct CaseData {
  std::vector<Tensor> inputs;
  std::vector<bool> differentiable;
  Ids ids;
};
CaseData load_case(const TensorFile& golden, const std::string& name);

// The inputs of the composite block test: parameters in a fixed order, ids and targets.
const TensorFile& golden_ops();
const TensorFile& golden_block();

// Element-wise comparison printing the max difference; -inf == -inf counts as equal.
struct Comparison {
  bool ok;
  double max_abs_diff;
  std::string where;
};
Comparison compare(const Array& got, const Array& want, double atol, double rtol);
// compare() as a Boost.Test check that logs the max difference under `what`.
void check_close(const std::string& what, const Array& got, const Array& want, double atol, double rtol);

}  // namespace tg::testing

namespace tg::testing {
// The composite of make_golden.py: a 2-layer GPT-style stack (causal self-attention, layer
// norm, GELU MLP, tied output projection) and its cross-entropy loss, built from ops only.
constexpr size_t kBlockWidth = 8, kBlockHeads = 2, kBlockLayers = 2;
Tensor block_loss(const std::map<std::string, Tensor>& params, const Ids& ids,
                  const Ids& targets);
std::map<std::string, Tensor> block_params(const TensorFile& golden);  // "param/<name>" entries
}  // namespace tg::testing
