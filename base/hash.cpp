#include "base/hash.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tg::base {

std::string fnv1a_file_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  Fnv1a h;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
    h.add_bytes(std::string_view(buffer, static_cast<size_t>(in.gcount())));
  if (in.bad()) throw std::runtime_error(path + ": read error while hashing");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.value()));
  return hex;
}

}  // namespace tg::base
