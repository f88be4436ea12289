#include "autograd/tape.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace tg {

namespace {
thread_local Tape t_tape;
thread_local bool t_grad_enabled = true;
bool g_detect_anomaly = false;

void check_finite(const char* op, const std::vector<Tensor>& inputs, const Tensor& output) {
  const float* v = output.data();
  for (size_t i = 0, n = output.numel(); i < n; ++i) {
    if (std::isfinite(v[i])) continue;
    std::string shapes;
    for (const auto& in : inputs) shapes += (shapes.empty() ? "" : ", ") + to_string(in.shape());
    throw std::runtime_error(std::string("anomaly: op '") + op + "' produced a non-finite value (" +
                             std::to_string(v[i]) + " at flat index " + std::to_string(i) +
                             ") from inputs of shapes " + shapes);
  }
}
}  // namespace

Tape& tape() {
  return t_tape;
}
bool grad_enabled() {
  return t_grad_enabled;
}

NoGrad::NoGrad() : previous_(t_grad_enabled) {
  t_grad_enabled = false;
}
NoGrad::~NoGrad() {
  t_grad_enabled = previous_;
}

void set_detect_anomaly(bool enabled) {
  g_detect_anomaly = enabled;
}
bool detect_anomaly() {
  return g_detect_anomaly;
}

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!t_grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

void record(const char* op, std::vector<Tensor> inputs, Tensor& output,
            std::function<void()> backward) {
  if (g_detect_anomaly) check_finite(op, inputs, output);
  output.set_requires_grad(true);
  // The node routes gradients; values are kept only by what the backward closure captured.
  for (Tensor& in : inputs) in = in.without_data();
  t_tape.push(Node{op, std::move(inputs), output.without_data(), std::move(backward)});
}

void backward(const Tensor& root, BackwardOptions options) {
  if (root.numel() != 1)
    throw std::invalid_argument("backward: root has shape " + to_string(root.shape()) +
                                "; pass a gradient of that shape for a non-scalar root");
  backward(root, Tensor::full(root.shape(), 1.0f), options);
}

void backward(const Tensor& root, const Tensor& root_grad, BackwardOptions options) {
  if (root.shape() != root_grad.shape())
    throw std::invalid_argument("backward: gradient shape " + to_string(root_grad.shape()) +
                                " does not match root shape " + to_string(root.shape()));
  auto& nodes = t_tape.nodes();
  size_t end = nodes.size();
  while (end > 0 && nodes[end - 1].output.impl() != root.impl()) --end;
  if (end == 0)
    throw std::logic_error(
        "backward: the root was not produced by an op recorded on this thread's tape. Either "
        "backward already ran and freed the graph (pass retain_graph to call it twice), the root "
        "was computed under NoGrad, or nothing it depends on requires a gradient");

  // Gradients of intermediate results are per backward call; only leaves accumulate.
  for (size_t i = 0; i < end; ++i) nodes[i].output.zero_grad();

  Tensor seed = root;
  const float* g = root_grad.data();
  float* dst = seed.grad_data();
  for (size_t i = 0, n = root.numel(); i < n; ++i) dst[i] += g[i];

  for (size_t i = end; i-- > 0;) {
    if (nodes[i].output.has_grad()) nodes[i].backward();  // else: does not lead to the root
    if (options.after_node) options.after_node(i);
    // Done with this node: free what its backward saved and, unless the caller holds the
    // tensor, its output and the output's gradient, as PyTorch frees its graph during backward.
    // Peak memory is then the forward's activations, not twice that.
    if (!options.retain_graph) nodes[i] = Node{};
  }
  if (!options.retain_graph) t_tape.clear();
}

}  // namespace tg
