// Optimizers over named parameters, grouped so that groups can differ in weight decay (e.g.
// no decay for biases, norms and embeddings). Parameters without a gradient after backward
// (frozen, or unused this step) are skipped entirely: no decay, no moment update.
#pragma once

#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "base/enum_names.hpp"
#include "nn/module.hpp"

namespace tg::optim {

struct NamedParam {
  std::string name;
  Tensor tensor;
};

struct ParamGroup {
  std::vector<NamedParam> params;
  float weight_decay = 0.0f;
};

// All trainable parameters of `model` in one group.
std::vector<ParamGroup> single_group(const nn::Module& model, float weight_decay = 0.0f);
// Which of the vocabulary's matrices decay with the other matrices: the input table
// (ParamRole::embedding, a tied output included) and the untied output projection
// (ParamRole::unembedding).
//   output  only the output projection (the default): a tied table then decays nowhere, an
//           untied model's output does, so tied vs untied also compares decay vs none;
//   none    neither: tied and untied models decay the same parameters;
//   all     both, as nanoGPT does.
enum class TableDecay { output, none, all };
inline constexpr base::NameTable<TableDecay, 3> kTableDecayNames{
    {{TableDecay::output, "output"}, {TableDecay::none, "none"}, {TableDecay::all, "all"}}};

// Two groups, as in GPT-2/nanoGPT: matrices (rank >= 2) decay; biases and norm scales do not;
// the vocabulary's tables as `tables` says.
std::vector<ParamGroup> decay_groups(const nn::Module& model, float weight_decay,
                                     TableDecay tables = TableDecay::output);

class Optimizer {
 public:
  Optimizer(std::vector<ParamGroup> groups, float lr);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  virtual const char* name() const = 0;
  // The kinds of per-parameter state step() keeps in slot() ("exp_avg", ...): a checkpoint
  // holding any other kind is refused on load, as state this optimizer would not read.
  virtual std::vector<std::string> state_kinds() const = 0;
  void zero_grad();

  float lr() const { return lr_; }
  void set_lr(float lr) { lr_ = lr; }
  long steps() const { return steps_; }
  const std::vector<ParamGroup>& groups() const { return groups_; }

  // Moments etc. as "<slot>.<param name>" tensors, plus the step count, for checkpoints.
  void save_state(TensorFile& file, const std::string& prefix) const;
  // Throws naming the entry if a slot is missing, has the wrong shape or is of a kind
  // state_kinds() does not name.
  void load_state(const TensorFile& file, const std::string& prefix);

 protected:
  // Per-parameter state slots ("exp_avg", ...), allocated as zeros of the parameter's shape;
  // `slot_name` must be one of state_kinds().
  Tensor& slot(const std::string& slot_name, const NamedParam& p);
  std::vector<ParamGroup> groups_;
  float lr_;
  long steps_ = 0;

 private:
  std::vector<std::pair<std::string, Tensor>> slots_;  // "<slot>.<param>" -> state
};

struct SGDOptions {
  float lr = 0.1f;
  float momentum = 0.0f;
};

// torch.optim.SGD: g += wd * p; buf = momentum * buf + g (buf = g at first); p -= lr * buf.
class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, SGDOptions options);
  void step() override;
  const char* name() const override { return "sgd"; }
  std::vector<std::string> state_kinds() const override { return {"momentum_buffer"}; }

 private:
  SGDOptions options_;
};

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
};

// torch.optim.Adam (decoupled = false: weight decay added to the gradient) and
// torch.optim.AdamW (decoupled = true: p *= 1 - lr * wd before the Adam update).
class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled);
  void step() override;
  const char* name() const override { return decoupled_ ? "adamw" : "adam"; }
  std::vector<std::string> state_kinds() const override { return {"exp_avg", "exp_avg_sq"}; }

 private:
  AdamOptions options_;
  bool decoupled_;
};

// Lazy Adam for row-sparse embedding gradients. A parameter whose gradient is only sparse
// rows updates just those rows and their moments (torch.optim.SparseAdam's rule, with the
// global step for bias correction); rows not in the batch do not move at all, unlike dense
// Adam, whose momentum keeps moving every row. Parameters with a dense gradient get AdamW.
// Decoupled weight decay, if any, touches only the rows being updated.
class LazyAdam : public Optimizer {
 public:
  LazyAdam(std::vector<ParamGroup> groups, AdamOptions options);
  void step() override;
  const char* name() const override { return "lazy-adam"; }
  std::vector<std::string> state_kinds() const override { return {"exp_avg", "exp_avg_sq"}; }

 private:
  AdamOptions options_;
};

// Scales all gradients (dense and sparse) so that their global L2 norm is at most max_norm,
// as torch.nn.utils.clip_grad_norm_. Returns the norm before clipping.
float clip_grad_norm(const std::vector<Tensor>& params, float max_norm);

}  // namespace tg::optim
