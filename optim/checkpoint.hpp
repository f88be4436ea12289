// Checkpoints: model parameters and optimizer state in one safetensors file, written
// atomically. Parameters are stored under their module names ("blocks.0.attn.qkv.weight"),
// so `safetensors.torch.load_file` shows a PyTorch user a familiar state dict; optimizer
// moments are under "optim.<slot>.<name>". Free-form metadata (config, step, RNG state,
// data position) travels in the header's __metadata__.
#pragma once

#include <map>
#include <string>

#include "nn/module.hpp"
#include "optim/optimizer.hpp"

namespace tg::optim {

// `extra` tensors (e.g. the best parameters so far) are stored under "extra.<name>".
void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer* optimizer,
                     const std::map<std::string, std::string>& metadata,
                     const std::map<std::string, Tensor>& extra = {});

// Loads parameters into `model` (and state into `optimizer` if given) after checking that the
// file holds exactly the model's parameter names with the same shapes; throws
// std::runtime_error naming the file and the first mismatch otherwise. Returns the metadata.
std::map<std::string, std::string> load_checkpoint(const std::string& path, nn::Module& model,
                                                   Optimizer* optimizer,
                                                   std::map<std::string, Tensor>* extra = nullptr);

}  // namespace tg::optim
