// libFuzzer harness shared by the targets: the readers take paths, so each input goes to a
// per-process temporary file first. A rejected input must throw std::exception; anything
// else (a crash, a sanitizer report, a leak, a hang) is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

namespace tg::fuzz {

inline const std::string& input_path() {
  static const std::string path = "/tmp/tapegrad_fuzz_" + std::to_string(::getpid());
  return path;
}

// A scratch file, removed when it goes out of scope: a fuzzing run leaves nothing behind.
struct ScratchFile {
  std::string path;
  ~ScratchFile() { std::remove(path.c_str()); }
};

template <class F>
int run(const uint8_t* data, size_t size, F reader) {
  const ScratchFile input{input_path()};
  FILE* f = std::fopen(input.path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    reader(input.path);
  } catch (const std::exception&) {
  }
  return 0;
}

}  // namespace tg::fuzz
