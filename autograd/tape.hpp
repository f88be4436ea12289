// The tape: reverse-mode automatic differentiation in one file.
//
// While gradients are enabled, every op whose inputs include a tensor that requires a
// gradient appends a Node {op name, inputs, output, backward} to this thread's tape.
// backward(loss) seeds d(loss)/d(loss) = 1, walks the tape in reverse and lets each node add
// (+=) its output's gradient into its inputs' gradients, so a tensor used twice receives
// the sum. Nodes whose output received no gradient are skipped: they do not lead to the
// loss. Each node is freed as soon as backward has passed it (what it saved for backward, and
// its output and that output's gradient unless the caller holds the tensor), so memory falls
// during backward instead of growing by a gradient per activation.
//
// Rules worth knowing:
//  * backward() frees the whole tape (every graph recorded on this thread) unless
//    retain_graph is set. Calling it again on a freed graph throws; with retain_graph,
//    a second call adds the same gradients again, as in PyTorch.
//  * Gradients of leaves accumulate across backward calls; zero them explicitly.
//  * Forward passes outside NoGrad that never reach backward() stay on the tape until the
//    next backward() or tape().clear(): run evaluation under NoGrad.
//  * Tensors never point at nodes, so there are no reference cycles.
#pragma once

#include <functional>
#include <initializer_list>
#include <vector>

#include "autograd/tensor.hpp"

namespace tg {

struct Node {
  const char* op;
  std::vector<Tensor> inputs;      // without their values (Tensor::without_data)
  Tensor output;                   // likewise
  std::function<void()> backward;  // reads output's grad, adds into inputs' grads
};

class Tape {
 public:
  void push(Node node) { nodes_.push_back(std::move(node)); }
  void clear() { nodes_.clear(); }
  size_t size() const { return nodes_.size(); }
  std::vector<Node>& nodes() { return nodes_; }

 private:
  std::vector<Node> nodes_;
};

Tape& tape();  // this thread's tape

bool grad_enabled();

// Inside a NoGrad scope nothing is recorded (inference, evaluation, optimizer updates).
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

// Anomaly mode: every recorded op checks that its output is finite and throws, naming the
// op and its input shapes, at the first one that is not (like torch.autograd.detect_anomaly).
void set_detect_anomaly(bool enabled);
bool detect_anomaly();

struct BackwardOptions {
  bool retain_graph = false;
  // Called with each tape position once backward has processed it (walking down from the
  // root): a leaf's gradient is final after the position of the first op that used it. Data
  // parallelism uses this to start reducing gradients while backward goes on.
  std::function<void(size_t node)> after_node = nullptr;
};

// Seeds the gradient of a one-element root with 1.
void backward(const Tensor& root, BackwardOptions options = {});
// Seeds the gradient of root with root_grad (same shape), e.g. for a vector-Jacobian product.
void backward(const Tensor& root, const Tensor& root_grad, BackwardOptions options = {});

// For op implementers: needs_grad(inputs) says whether gradients are enabled and any input
// requires one; only then build the backward closure (inference stays free of that cost) and
// call record, which appends the node and marks output as requiring a gradient. The closure keeps
// alive the values of every Tensor it captures: capture `t.without_data()` where backward needs t's
// gradient but not its values (an output, the operands of a sum), so activations no one reads are
// freed.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
void record(const char* op, std::vector<Tensor> inputs, Tensor& output,
            std::function<void()> backward);

}  // namespace tg
