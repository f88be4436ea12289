#include "base/build_info.hpp"

namespace tg::base {

// Defined in the generated build_commit.cpp (cmake/build_commit.cmake), refreshed at every build.
extern const char* const kBuildCommit;

const char* version() {
  return TAPEGRAD_VERSION;
}

const char* commit() {
  return kBuildCommit;
}

}  // namespace tg::base
