// The byte-level BPE readers and encoder: the input is encoder.json, a NUL byte, then vocab.bpe
// (the seeds are small trained vocabularies). A vocabulary that loads must encode any text and
// decode it back to the same bytes.
#include <cstdlib>
#include <fstream>

#include "fuzz_common.hpp"
#include "text/bpe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string encoder = input.substr(0, nul);
  const std::string merges = nul == std::string::npos ? "" : input.substr(nul + 1);
  return tg::fuzz::run(reinterpret_cast<const uint8_t*>(encoder.data()), encoder.size(),
                       [&](const std::string& encoder_path) {
                         const tg::fuzz::ScratchFile merges_file{encoder_path + ".bpe"};
                         std::ofstream(merges_file.path, std::ios::binary) << merges;
                         const auto bpe =
                             tg::text::BytePairEncoding::load(encoder_path, merges_file.path);
                         // The input itself as text: every byte value, invalid UTF-8 included.
                         if (bpe.decode(bpe.encode(input)) != input) std::abort();
                       });
}
