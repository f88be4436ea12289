#include "nn/module.hpp"

#include <algorithm>
#include <stdexcept>

namespace tg::nn {

Tensor Module::register_parameter(const std::string& name, Tensor tensor, ParamRole role) {
  for (const auto& p : params_)
    if (p.name == name) throw std::logic_error("Module: parameter '" + name + "' registered twice");
  tensor.set_name(name);
  params_.push_back({name, tensor, role});
  return tensor;
}

void Module::collect(const std::string& prefix, std::vector<NamedParameter>& out,
                     std::vector<const TensorImpl*>& seen) const {
  for (const auto& p : params_) {
    if (std::find(seen.begin(), seen.end(), p.tensor.impl()) != seen.end()) continue;
    seen.push_back(p.tensor.impl());
    out.push_back({prefix + p.name, p.tensor, p.role});
  }
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out, seen);
}

std::vector<NamedParameter> Module::parameters_with_roles() const {
  std::vector<NamedParameter> out;
  std::vector<const TensorImpl*> seen;
  collect("", out, seen);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& p : parameters_with_roles()) out.emplace_back(std::move(p.name), std::move(p.tensor));
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
    const bool under = name == name_or_prefix || name.rfind(name_or_prefix + ".", 0) == 0;
    if (!under) continue;
    t.set_requires_grad(requires_grad);
    matched = true;
  }
  if (!matched)
    throw std::out_of_range("set_requires_grad: no parameter named or under '" + name_or_prefix +
                            "'");
}

}  // namespace tg::nn
