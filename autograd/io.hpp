// Tensor files: the safetensors format (written atomically, base/files.hpp).
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace tg {

// safetensors (https://github.com/huggingface/safetensors): 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the
// raw little-endian data. Readable by PyTorch users with `safetensors.torch.load_file`.
struct TensorFile {
  std::map<std::string, Tensor> tensors;  // F32 entries
  std::map<std::string, Ids> ids;         // I64 / I32 entries (stored as int32 here)
  std::map<std::string, std::string> metadata;

  // Named access with an error that lists what the file holds.
  const Tensor& tensor(const std::string& name) const;
  const Ids& id_array(const std::string& name) const;
};

void save_safetensors(const std::string& path, const TensorFile& file);
// Validates everything before allocating: header size, JSON, dtypes, shapes against byte
// ranges, ranges inside the file and not overlapping. Throws std::runtime_error naming the
// path and the entry on any problem.
TensorFile load_safetensors(const std::string& path);
// The header's __metadata__ alone, without reading the tensors.
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

}  // namespace tg
