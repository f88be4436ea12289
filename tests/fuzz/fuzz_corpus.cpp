#include <string>

#include "text/corpus.hpp"
#include "text/vocab.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const tg::text::Tokens tokens = tg::text::parse_tagged(text);
  const auto vocab = tg::text::Vocabulary::build(tokens, 1);
  for (const auto& t : tokens)
    if (vocab.id(t) == vocab.unk() && t != tg::text::Vocabulary::kUnk)
      __builtin_trap();  // every token is known
  return 0;
}
