#include "optim/checkpoint.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "base/hash.hpp"

namespace tg::optim {

namespace {
// Version 2 adds "checksums" to the metadata; version 1 files (written before) still load,
// unchecked.
constexpr const char* kFormat = "tapegrad-checkpoint-2";
constexpr const char* kFormatWithoutChecksums = "tapegrad-checkpoint-1";
constexpr const char* kChecksums = "checksums";
constexpr const char* kOptimPrefix = "optim.";
constexpr const char* kExtraPrefix = "extra.";

// FNV-1a of a tensor's bytes as 16 hex digits: tells a damaged tensor (a flipped byte, a
// rewritten value) from the one saved; not a defence against a forged file.
std::string checksum(const Tensor& t) {
  base::Fnv1a hash;
  hash.add_bytes({reinterpret_cast<const char*>(t.data()), t.numel() * sizeof(float)});
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash.value()));
  return hex;
}

// Every tensor the checksums list is in the file with the same bytes, and every tensor in the
// file is listed: a damaged, truncated or edited checkpoint (a moment deleted, a weight
// rewritten) is refused, naming the tensor, instead of resuming as another run.
void verify_checksums(const TensorFile& file, const std::string& path) {
  auto fail = [&](const std::string& what) { throw std::runtime_error(path + ": " + what); };
  const auto listed = file.metadata.find(kChecksums);
  if (listed == file.metadata.end()) fail("no tensor checksums in its metadata (a damaged file)");
  const nlohmann::json sums = nlohmann::json::parse(listed->second, nullptr, false);
  if (!sums.is_object()) fail("its tensor checksums are not a JSON object (a damaged file)");
  for (const auto& [name, sum] : sums.items()) {
    const auto t = file.tensors.find(name);
    if (t == file.tensors.end())
      fail("tensor '" + name + "' is missing (the checkpoint was saved with it: a damaged or " +
           "edited file)");
    if (!sum.is_string() || sum.get<std::string>() != checksum(t->second))
      fail("tensor '" + name + "' does not match its checksum (a damaged or edited file)");
  }
  for (const auto& [name, t] : file.tensors)
    if (!sums.contains(name))
      fail("tensor '" + name + "' was not in the checkpoint when it was saved (an edited file)");
}
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
  nlohmann::json sums = nlohmann::json::object();
  for (const auto& [name, t] : file.tensors) sums[name] = checksum(t);
  file.metadata[kChecksums] = sums.dump();
  save_safetensors(path, file);
}

std::map<std::string, std::string> load_checkpoint(const std::string& path, nn::Module& model,
                                                   Optimizer* optimizer,
                                                   std::map<std::string, Tensor>* extra) {
  const TensorFile file = load_safetensors(path);
  auto fail = [&](const std::string& what) { throw std::runtime_error(path + ": " + what); };
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() ||
      (format->second != kFormat && format->second != kFormatWithoutChecksums))
    fail("not a tapegrad checkpoint (metadata 'format' is not " + std::string(kFormat) + ")");
  if (format->second == kFormat) verify_checksums(file, path);

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
