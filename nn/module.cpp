#include "nn/module.hpp"

#include <algorithm>
#include <stdexcept>

namespace tg::nn {

Tensor Module::register_parameter(const std::string& name, Tensor tensor) {
  for (const auto& [n, _] : params_)
    if (n == name) throw std::logic_error("Module: parameter '" + name + "' registered twice");
  tensor.set_name(name);
  params_.emplace_back(name, tensor);
  return tensor;
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out,
                     std::vector<const TensorImpl*>& seen) const {
  for (const auto& [name, t] : params_) {
    if (std::find(seen.begin(), seen.end(), t.impl()) != seen.end()) continue;
    seen.push_back(t.impl());
    out.emplace_back(prefix + name, t);
  }
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out, seen);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  std::vector<const TensorImpl*> seen;
  collect("", out, seen);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters()) out.push_back(t);
  return out;
}

std::vector<Tensor> Module::trainable_parameters() const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters())
    if (t.requires_grad()) out.push_back(t);
  return out;
}

Tensor Module::parameter(const std::string& name) const {
  const auto all = named_parameters();
  for (const auto& [n, t] : all)
    if (n == name) return t;
  std::string known;
  for (const auto& [n, _] : all) known += (known.empty() ? "" : ", ") + n;
  throw std::out_of_range("no parameter named '" + name + "' (the model has: " + known + ")");
}

size_t Module::num_parameters() const {
  size_t n = 0;
  for (const auto& t : parameters()) n += t.numel();
  return n;
}

size_t Module::num_trainable_parameters() const {
  size_t n = 0;
  for (const auto& t : trainable_parameters()) n += t.numel();
  return n;
}

void Module::train(bool training) {
  training_ = training;
  for (auto& [_, child] : children_) child->train(training);
}

void Module::zero_grad() {
  for (auto& t : parameters()) t.zero_grad();
}

void Module::set_all_requires_grad(bool requires_grad) {
  for (auto& t : parameters()) t.set_requires_grad(requires_grad);
}

void Module::set_requires_grad(const std::string& name_or_prefix, bool requires_grad) {
  bool matched = false;
  for (auto& [name, t] : named_parameters()) {
    const bool under = name == name_or_prefix ||
                       name.rfind(name_or_prefix + ".", 0) == 0;
    if (!under) continue;
    t.set_requires_grad(requires_grad);
    matched = true;
  }
  if (!matched)
    throw std::out_of_range("set_requires_grad: no parameter named or under '" + name_or_prefix + "'");
}

}  // namespace tg::nn
