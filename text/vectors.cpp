#include "text/vectors.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "autograd/io.hpp"
#include "base/files.hpp"

namespace tg::text {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& what) {
  throw std::runtime_error(path + ":" + where + ": " + what);
}

struct Header {
  size_t count = 0, dim = 0;
};

Header parse_header(const std::string& path, const std::string& line, uint64_t file_size,
                    bool binary) {
  std::istringstream in(line);
  long long count = -1, dim = -1;
  std::string extra;
  if (!(in >> count >> dim) || (in >> extra) || count <= 0 || dim <= 0)
    fail(path, "1",
         "header '" + line.substr(0, 80) +
             "' is not '<word count> <dimension>' with positive numbers");
  // Every value takes at least 4 bytes in binary and 2 in text ("0 "): refuse claims the file
  // cannot hold before allocating anything.
  const double need = static_cast<double>(count) * static_cast<double>(dim) * (binary ? 4.0 : 2.0);
  if (need > static_cast<double>(file_size))
    fail(path, "1",
         "header claims " + std::to_string(count) + " vectors of dimension " + std::to_string(dim) +
             ", more than the " + std::to_string(file_size) +
             "-byte file can hold (truncated or corrupt)");
  return {static_cast<size_t>(count), static_cast<size_t>(dim)};
}

void add_word(const std::string& path, const std::string& where, WordVectors& v, std::string word) {
  if (word.empty()) fail(path, where, "empty word");
  if (!v.index.emplace(word, static_cast<int>(v.words.size())).second)
    fail(path, where, "word '" + word + "' appears twice");
  v.words.push_back(std::move(word));
}

void check_finite(const std::string& path, const std::string& where, float x) {
  if (!std::isfinite(x)) fail(path, where, "value is not finite (" + std::to_string(x) + ")");
}

// Whether the first record after the header is a line of text: a word and at least one field
// written as a number. Neither the count of fields nor the range of the numbers decides it, so
// that a text file with a value outside float's range or rows shorter than its header says is
// read as text and refused with its line, not taken for binary and read as garbage.
bool looks_like_text(const std::string& first_record) {
  std::istringstream in(first_record);
  std::string word, field;
  if (!(in >> word)) return false;
  size_t fields = 0;
  while (in >> field) {
    double x;
    auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), x);
    if ((ec != std::errc() && ec != std::errc::result_out_of_range) ||
        ptr != field.data() + field.size())
      return false;
    ++fields;
  }
  return fields > 0;
}

}  // namespace

int WordVectors::find(const std::string& word) const {
  auto it = index.find(word);
  return it == index.end() ? -1 : it->second;
}

void save_vectors(const std::string& path, const std::vector<std::string>& words,
                  const Tensor& matrix, VectorFormat format) {
  if (matrix.dim() != 2 || matrix.size(0) != words.size())
    throw std::invalid_argument("save_vectors: " + std::to_string(words.size()) +
                                " words but a matrix of shape " + to_string(matrix.shape()));
  for (const auto& w : words)
    if (w.empty() || w.find_first_of(" \t\n\r") != std::string::npos)
      throw std::invalid_argument("save_vectors: word '" + w +
                                  "' is empty or contains white space");
  const size_t dim = matrix.size(1);
  base::atomic_write(path, [&](std::ostream& out) {
    out << words.size() << ' ' << dim << '\n';
    char buf[32];
    for (size_t r = 0; r < words.size(); ++r) {
      const float* row = matrix.data() + r * dim;
      out << words[r];
      if (format == VectorFormat::binary) {
        out << ' ';
        out.write(reinterpret_cast<const char*>(row),
                  static_cast<std::streamsize>(dim * sizeof(float)));
      } else {
        for (size_t j = 0; j < dim; ++j) {
          auto [end, ec] = std::to_chars(buf, buf + sizeof buf, row[j]);  // shortest exact form
          out << ' ' << std::string_view(buf, static_cast<size_t>(end - buf));
        }
      }
      out << '\n';
    }
  });
}

WordVectors load_vectors(const std::string& path, VectorFormat format) {
  base::require_regular_file(path);  // its size is checked before reading
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open vectors file for reading");
  const uint64_t file_size = std::filesystem::file_size(path);
  std::string header_line;
  if (!std::getline(in, header_line)) fail(path, "1", "empty file");
  const std::streampos data_start = in.tellg();

  if (format == VectorFormat::autodetect) {
    std::string first;
    std::getline(in, first);
    const Header h = parse_header(path, header_line, file_size, false);
    (void)h;  // the header alone is checked here; the record says which format follows
    format = looks_like_text(first) ? VectorFormat::text : VectorFormat::binary;
    in.clear();
    in.seekg(data_start);
  }
  const bool binary = format == VectorFormat::binary;
  const Header h = parse_header(path, header_line, file_size, binary);
  WordVectors v;
  v.matrix = Tensor::empty({h.count, h.dim});
  float* values = v.matrix.data();

  if (!binary) {
    std::string line;
    for (size_t r = 0; r < h.count; ++r) {
      const std::string where = std::to_string(r + 2);
      if (!std::getline(in, line))
        fail(path, where,
             "file ends after " + std::to_string(r) + " of the " + std::to_string(h.count) +
                 " vectors the header announces (truncated?)");
      const char* p = line.data();
      const char* end = p + line.size();
      auto skip_space = [&] {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
      };
      skip_space();
      const char* word_start = p;
      while (p < end && *p != ' ' && *p != '\t') ++p;
      add_word(path, where, v, std::string(word_start, p));
      for (size_t j = 0; j < h.dim; ++j) {
        skip_space();
        if (p == end)
          fail(path, where,
               "expected " + std::to_string(h.dim) + " values for '" + v.words.back() +
                   "', found " + std::to_string(j));
        const char* field = p;
        float x;
        auto [next, ec] = std::from_chars(p, end, x);
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r') ++p;
        if (ec == std::errc::result_out_of_range && next == p)
          fail(path, where,
               "'" + std::string(field, p) + "' is outside float's range (value " +
                   std::to_string(j + 1) + ")");
        if (ec != std::errc() || next != p)
          fail(path, where,
               "'" + std::string(field, p) + "' is not a number (value " + std::to_string(j + 1) +
                   ")");
        check_finite(path, where, x);
        values[r * h.dim + j] = x;
      }
      skip_space();
      if (p != end)
        fail(path, where,
             "more than " + std::to_string(h.dim) + " values for '" + v.words.back() + "'");
    }
    while (std::getline(in, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos)
        fail(path, std::to_string(h.count + 2),
             "more vectors than the header's " + std::to_string(h.count));
  } else {
    for (size_t r = 0; r < h.count; ++r) {
      std::string word;
      char c;
      while (in.get(c) && (c == '\n' || c == ' ')) {
      }  // the newline after the previous vector
      const std::string offset = "byte " + std::to_string(static_cast<long long>(in.tellg()) - 1);
      if (!in)
        fail(path, offset,
             "file ends after " + std::to_string(r) + " of the " + std::to_string(h.count) +
                 " vectors the header announces (truncated?)");
      do {
        word.push_back(c);
        if (word.size() > 1000)
          fail(path, offset, "word longer than 1000 bytes: not a word2vec binary file?");
      } while (in.get(c) && c != ' ');
      if (!in) fail(path, offset, "file ends inside the word '" + word.substr(0, 40) + "'");
      add_word(path, offset, v, word);
      float* row = values + r * h.dim;
      in.read(reinterpret_cast<char*>(row), static_cast<std::streamsize>(h.dim * sizeof(float)));
      if (!in) fail(path, offset, "file ends inside the vector of '" + word + "' (truncated?)");
      for (size_t j = 0; j < h.dim; ++j) check_finite(path, offset, row[j]);
    }
  }
  return v;
}

Tensor align_to_vocab(const WordVectors& vectors, const Vocabulary& vocab, size_t dim,
                      Generator& gen, AlignStats* stats) {
  if (vectors.dim() != dim)
    throw std::invalid_argument(
        "pretrained vectors have dimension " + std::to_string(vectors.dim()) +
        " but the token table reads vectors of width " + std::to_string(dim) +
        " (train word2vec with --size " + std::to_string(dim) + ")");
  double sum = 0.0, sum_sq = 0.0;
  const size_t n = vectors.matrix.numel();
  for (size_t i = 0; i < n; ++i) {
    sum += vectors.matrix.data()[i];
    sum_sq += static_cast<double>(vectors.matrix.data()[i]) * vectors.matrix.data()[i];
  }
  const double mean = sum / static_cast<double>(n);
  const float std =
      static_cast<float>(std::sqrt(std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean)));
  AlignStats s;
  s.init_std = std;
  Tensor table = Tensor::empty({vocab.size(), dim});
  for (size_t id = 0; id < vocab.size(); ++id) {
    float* row = table.data() + id * dim;
    const int found = vectors.find(vocab.spelling(static_cast<int32_t>(id)));
    if (found >= 0) {
      std::memcpy(row, vectors.matrix.data() + static_cast<size_t>(found) * dim,
                  dim * sizeof(float));
      ++s.found;
    } else {
      for (size_t j = 0; j < dim; ++j) row[j] = std * gen.normal();
      ++s.missing;
    }
  }
  if (stats) *stats = s;
  return table;
}

}  // namespace tg::text
