// FNV-1a, 64 bits: the fingerprints of corpora, token streams and files. Not cryptographic: it
// tells a changed or replaced file from the one recorded, not a forged one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tg::base {

class Fnv1a {
 public:
  void add_byte(unsigned char b) { hash_ = (hash_ ^ b) * kPrime; }
  void add_bytes(std::string_view bytes) {
    for (unsigned char b : bytes) add_byte(b);
  }
  // The low `bytes` bytes of v, least significant first.
  void add_little_endian(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) add_byte(static_cast<unsigned char>((v >> (8 * i)) & 0xFF));
  }
  uint64_t value() const { return hash_; }

 private:
  static constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t hash_ = 1469598103934665603ull;
};

// The hash of a file's bytes, as 16 hex digits; throws naming the file when it cannot be read.
std::string fnv1a_file_hex(const std::string& path);

}  // namespace tg::base
