#include "fuzz_common.hpp"
#include "text/vectors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tg::fuzz::run(data, size, [](const std::string& p) {
    tg::text::load_vectors(p, tg::text::VectorFormat::text);
  });
}
