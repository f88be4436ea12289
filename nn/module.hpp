// Module: a tree of named parameters and sub-modules, as in PyTorch's nn.Module.
//
// A layer registers its parameters and children in its constructor; names compose with
// dots (blocks.0.attn.qkv.weight). A tensor registered twice (a tied weight) is listed,
// counted and optimised once, under its first name.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd.hpp"

namespace tg::nn {

// What a parameter is for, so that initialisation (init_gpt2) and optimizer groups select by
// role instead of by name. A layer declares it when it registers the parameter.
enum class ParamRole {
  other,            // left alone by init_gpt2; decays if it is a matrix
  weight,           // a projection matrix: N(0, 0.02)
  residual_weight,  // a projection into the residual stream: N(0, 0.02 / sqrt(2 * layers))
  bias,             // zero
  embedding,        // a lookup table: initialised by its layer
  unembedding,      // the projection onto the vocabulary (untied): initialised like weight;
                    // whether it decays is the tables' choice (optim::TableDecay)
  norm,             // a normalisation's scale or shift: initialised by its layer
};

struct NamedParameter {
  std::string name;
  Tensor tensor;
  ParamRole role;
};

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Every distinct parameter with its full name, in registration order.
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<NamedParameter> parameters_with_roles() const;
  std::vector<Tensor> parameters() const;
  std::vector<Tensor> trainable_parameters() const;  // those with requires_grad
  Tensor parameter(const std::string& name) const;   // throws naming the known names
  size_t num_parameters() const;                     // elements, tied tensors once
  size_t num_trainable_parameters() const;

  void train(bool training = true);  // this module and every descendant
  void eval() { train(false); }
  bool training() const { return training_; }

  void zero_grad();
  void freeze() { set_all_requires_grad(false); }  // every parameter below this module
  void unfreeze() { set_all_requires_grad(true); }
  // One parameter or every parameter under a prefix ("blocks.0"), by name.
  void set_requires_grad(const std::string& name_or_prefix, bool requires_grad);

 protected:
  Tensor register_parameter(const std::string& name, Tensor tensor,
                            ParamRole role = ParamRole::other);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void set_all_requires_grad(bool requires_grad);
  void collect(const std::string& prefix, std::vector<NamedParameter>& out,
               std::vector<const TensorImpl*>& seen) const;

  std::vector<NamedParameter> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// A module with one input and one output of the same kind: what a GPT block's attention,
// feed-forward and norm are (nn/block.hpp), and what a user's replacement implements.
class Layer : public Module {
 public:
  virtual Tensor forward(const Tensor& x) const = 0;
};

}  // namespace tg::nn
