#include "optim/checkpoint.hpp"

#include <stdexcept>

namespace tg::optim {

namespace {
constexpr const char* kFormat = "tapegrad-checkpoint-1";
constexpr const char* kOptimPrefix = "optim.";
constexpr const char* kExtraPrefix = "extra.";
}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer* optimizer,
                     const std::map<std::string, std::string>& metadata,
                     const std::map<std::string, Tensor>& extra) {
  TensorFile file;
  file.metadata = metadata;
  file.metadata["format"] = kFormat;
  for (const auto& [name, t] : model.named_parameters()) file.tensors[name] = t;
  if (optimizer) optimizer->save_state(file, kOptimPrefix);
  for (const auto& [name, t] : extra) file.tensors[kExtraPrefix + name] = t;
  save_safetensors(path, file);
}

std::map<std::string, std::string> load_checkpoint(const std::string& path, nn::Module& model,
                                                   Optimizer* optimizer,
                                                   std::map<std::string, Tensor>* extra) {
  const TensorFile file = load_safetensors(path);
  auto fail = [&](const std::string& what) { throw std::runtime_error(path + ": " + what); };
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != kFormat)
    fail("not a tapegrad checkpoint (metadata 'format' is not " + std::string(kFormat) + ")");

  const auto params = model.named_parameters();
  size_t model_entries = 0;
  for (const auto& [name, t] : file.tensors)
    if (name.rfind(kOptimPrefix, 0) != 0 && name.rfind(kExtraPrefix, 0) != 0) ++model_entries;
  for (const auto& [name, p] : params) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end())
      fail("parameter '" + name + "' is missing (a checkpoint of another model?)");
    if (it->second.shape() != p.shape())
      fail("parameter '" + name + "' has shape " + to_string(it->second.shape()) +
           " in the file but " + to_string(p.shape()) + " in the model");
  }
  if (model_entries != params.size())
    fail("the file holds " + std::to_string(model_entries) + " parameters but the model has " +
         std::to_string(params.size()) + " (a checkpoint of another model?)");
  for (const auto& [name, p] : params) {
    const Tensor& src = file.tensors.at(name);
    Tensor dst = p;
    std::copy(src.data(), src.data() + src.numel(), dst.data());
  }
  if (optimizer) {
    try {
      optimizer->load_state(file, kOptimPrefix);
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }
  if (extra)
    for (const auto& [name, t] : file.tensors)
      if (name.rfind(kExtraPrefix, 0) == 0)
        (*extra)[name.substr(std::string(kExtraPrefix).size())] = t;
  return file.metadata;
}

}  // namespace tg::optim
