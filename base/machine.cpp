#include "base/machine.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace tg::base {

uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

std::string bytes_text(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / (1024.0 * 1024));
  return buf;
}

namespace {
// The value of the first "key : value" line of /proc/cpuinfo with this key, or "".
std::string cpuinfo(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || line.compare(0, key.size(), key) != 0) continue;
    if (line.find_first_not_of(" \t", key.size()) != colon) continue;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}
}  // namespace

std::string cpu_model() {
  return cpuinfo("model name");
}

std::string cpu_instruction_sets() {
  std::string found;
  const std::string all = " " + cpuinfo("flags") + " ";
  for (const char* isa : {"avx2", "fma", "avx512f", "avx512bw", "avx512_bf16", "amx_bf16"})
    if (all.find(" " + std::string(isa) + " ") != std::string::npos)
      found += (found.empty() ? "" : " ") + std::string(isa);
  return found;
}

}  // namespace tg::base
