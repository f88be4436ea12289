#include "base/build_info.hpp"

#include <utility>

namespace tg::base {

// Defined in the generated build_commit.cpp (cmake/build_commit.cmake), refreshed at every build.
extern const char* const kBuildCommit;

const char* version() {
  return TAPEGRAD_VERSION;
}

const char* commit() {
  return kBuildCommit;
}

const char* build_type() {
  return TAPEGRAD_BUILD_TYPE;
}

namespace {
std::vector<std::string>& recorded_command_line() {
  static std::vector<std::string> words;
  return words;
}
}  // namespace

void record_command_line(char** argv) {
  std::vector<std::string> words;
  for (char** word = argv; word && *word; ++word) words.emplace_back(*word);
  recorded_command_line() = std::move(words);
}

const std::vector<std::string>& command_line() {
  return recorded_command_line();
}

}  // namespace tg::base
