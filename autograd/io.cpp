#include "autograd/io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "base/escape.hpp"
#include "base/files.hpp"

namespace tg {

namespace {

// The project targets little-endian machines; refuse to write garbage elsewhere.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes little-endian");

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

}  // namespace

const Tensor& TensorFile::tensor(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) {
    std::string names;
    for (const auto& [n, _] : tensors) names += (names.empty() ? "" : ", ") + n;
    throw std::out_of_range("no float tensor named '" + name + "' (have: " + names + ")");
  }
  return it->second;
}

const Ids& TensorFile::id_array(const std::string& name) const {
  auto it = ids.find(name);
  if (it == ids.end()) throw std::out_of_range("no integer tensor named '" + name + "'");
  return it->second;
}

void save_safetensors(const std::string& path, const TensorFile& file) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  auto add = [&](const std::string& name, const char* dtype, const Shape& shape, uint64_t bytes) {
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  };
  for (const auto& [name, t] : file.tensors) add(name, "F32", t.shape(), t.numel() * 4);
  for (const auto& [name, v] : file.ids) add(name, "I64", v.shape, v.numel() * 8);
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // align the data section, as the reference does
  base::atomic_write(path, [&](std::ostream& out) {
    const uint64_t length = text.size();
    out.write(reinterpret_cast<const char*>(&length), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, t] : file.tensors)
      out.write(reinterpret_cast<const char*>(t.data()),
                static_cast<std::streamsize>(t.numel() * 4));
    for (const auto& [name, v] : file.ids) {
      std::vector<int64_t> wide(v.values.begin(), v.values.end());
      out.write(reinterpret_cast<const char*>(wide.data()),
                static_cast<std::streamsize>(wide.size() * 8));
    }
  });
}

namespace {

// The JSON header of a safetensors file (with `in` left at the data), its file and header sizes.
nlohmann::json read_header(const std::string& path, std::ifstream& in, uint64_t& file_size,
                           uint64_t& header_size) {
  if (!in) fail(path, std::string("cannot open for reading: ") + std::strerror(errno));
  in.seekg(0, std::ios::end);
  file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  if (file_size < 8)
    fail(path,
         "file is " + std::to_string(file_size) + " bytes, too short for a safetensors header");
  header_size = 0;
  in.read(reinterpret_cast<char*>(&header_size), 8);
  if (header_size > kMaxHeaderBytes || header_size > file_size - 8)
    fail(path, "header claims " + std::to_string(header_size) + " bytes but the file has " +
                   std::to_string(file_size - 8) +
                   " after the length field (truncated or not safetensors)");
  std::string text(header_size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_size));
  nlohmann::json header;
  // A JSON object may repeat a key, and the parser keeps the last: a tensor named twice would
  // load one of two values silently, so a repeated top-level name is an error.
  std::set<std::string> names;
  std::string repeated;
  const auto no_repeats = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& key) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key && repeated.empty() &&
        !names.insert(key.get<std::string>()).second)
      repeated = key.get<std::string>();
    return true;
  };
  try {
    header = nlohmann::json::parse(text, no_repeats);
  } catch (const nlohmann::json::exception& e) {
    fail(path, "header is not valid JSON: " + base::json_error_text(e.what()));
  }
  if (!repeated.empty()) fail(path, "the header names '" + repeated + "' twice");
  if (!header.is_object()) fail(path, "header is not a JSON object");
  return header;
}

std::map<std::string, std::string> header_metadata(const std::string& path,
                                                   const nlohmann::json& header) {
  std::map<std::string, std::string> metadata;
  if (!header.contains("__metadata__")) return metadata;
  const auto& entry = header["__metadata__"];
  if (!entry.is_object()) fail(path, "__metadata__ is not an object");
  for (const auto& [k, v] : entry.items()) {
    if (!v.is_string()) fail(path, "__metadata__." + k + " is not a string");
    metadata[k] = v.get<std::string>();
  }
  return metadata;
}

}  // namespace

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t file_size = 0, header_size = 0;
  return header_metadata(path, read_header(path, in, file_size, header_size));
}

TensorFile load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t file_size = 0, header_size = 0;
  const nlohmann::json header = read_header(path, in, file_size, header_size);
  const uint64_t data_start = 8 + header_size, data_size = file_size - data_start;

  TensorFile file;
  file.metadata = header_metadata(path, header);
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string where = "entry '" + name + "': ";
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets"))
      fail(path, where + "needs dtype, shape and data_offsets");
    const auto& dtype_json = entry["dtype"];
    if (!dtype_json.is_string()) fail(path, where + "dtype is not a string");
    const std::string dtype = dtype_json.get<std::string>();
    const uint64_t item = dtype == "F32" || dtype == "I32" ? 4 : dtype == "I64" ? 8 : 0;
    if (item == 0)
      fail(path, where + "unsupported dtype " + dtype + " (F32, I32 and I64 are supported)");
    Shape shape;
    uint64_t count = 1;
    if (!entry["shape"].is_array()) fail(path, where + "shape is not an array");
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned())
        fail(path, where + "shape holds a non-integer or negative dimension");
      const uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && count > data_size / dim)
        fail(path, where + "shape claims more data than the file holds");
      count *= dim;
      shape.push_back(dim);
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      fail(path, where + "data_offsets must be two non-negative integers");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > data_size)
      fail(path, where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") fall outside the " + std::to_string(data_size) +
                     "-byte data section (truncated file?)");
    if (end - begin != count * item)
      fail(path, where + "shape " + to_string(shape) + " of " + dtype + " needs " +
                     std::to_string(count * item) + " bytes but data_offsets span " +
                     std::to_string(end - begin));
    ranges.push_back({begin, end, name});
    in.seekg(static_cast<std::streamoff>(data_start + begin));
    if (dtype == "F32") {
      Tensor t = Tensor::empty(shape);
      in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(count * 4));
      t.set_name(name);
      file.tensors.emplace(name, std::move(t));
    } else {
      std::vector<int32_t> values(count);
      for (uint64_t i = 0; i < count; ++i) {
        int64_t v = 0;
        in.read(reinterpret_cast<char*>(&v), static_cast<std::streamsize>(item));
        if (item == 4) v = static_cast<int32_t>(v);
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
          fail(path, where + "value " + std::to_string(v) + " does not fit in 32 bits");
        values[i] = static_cast<int32_t>(v);
      }
      file.ids.emplace(name, Ids(shape, std::move(values)));
    }
    if (!in) fail(path, where + "read failed");
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  // The data section is the entries' bytes end to end, as the reference implementation
  // requires: bytes no entry claims (a gap, or junk appended after the last) mean a damaged
  // file or one that was written by something else.
  uint64_t covered = 0;
  for (const Range& r : ranges) {
    if (r.begin < covered)
      fail(path, "entries '" + r.name + "' and another overlap at byte " + std::to_string(r.begin));
    if (r.begin > covered)
      fail(path, std::to_string(r.begin - covered) + " bytes of the data section before entry '" +
                     r.name + "' belong to no entry");
    covered = r.end;
  }
  if (covered != data_size)
    fail(path, std::to_string(data_size - covered) +
                   " bytes after the last entry's data belong to no entry (junk appended, or "
                   "a damaged file)");
  return file;
}

}  // namespace tg
