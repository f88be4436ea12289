// Files: atomic writes and the safetensors format.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace tg {

// Writes through `write` into a temporary file beside `path`, flushes it to disk, then
// renames it over `path`: readers see the old file or the new one, never half of one.
// Throws std::runtime_error naming the path and the system's reason if any step fails (the old
// file stays). A symlink at `path` is followed (the link stays a link); temporary files that
// killed writers left beside `path` are removed.
void atomic_write(const std::string& path, const std::function<void(std::ostream&)>& write);

// Runs a program with an argument vector, found on PATH, in `directory` (empty: here), and
// returns its exit status (128 + N if signal N ended it). No shell is involved, so no text in
// the arguments (paths, environment values) is ever interpreted. Throws if it cannot start.
enum class ProgramOutput { keep, to_stderr, discard };
int run_program(const std::vector<std::string>& args, ProgramOutput output = ProgramOutput::keep,
                const std::string& directory = "");

// Throws std::invalid_argument, naming `what` (a flag) and the path, unless a file could be
// written at `path`: its folder exists and is writable, and it is not itself a folder. For
// checking outputs before a long run rather than after it. An empty path passes.
void check_writable(const std::string& path, const std::string& what);

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
