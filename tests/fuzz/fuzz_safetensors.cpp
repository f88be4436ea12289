#include "autograd/io.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tg::fuzz::run(data, size, [](const std::string& p) { tg::load_safetensors(p); });
}
