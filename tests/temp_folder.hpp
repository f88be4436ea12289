// A folder of a test case's own under the system's temporary folder, removed when the test case
// ends, passed or failed. Its name holds the test case's name and the process id, so that two
// test runs on one machine (a Release and a sanitizer build, say) never share one.
#pragma once

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <system_error>

namespace tg::testing {

struct TempFolder {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("tapegrad_" + boost::unit_test::framework::current_test_case().p_name.get() + "_" +
       std::to_string(::getpid()));

  TempFolder() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~TempFolder() {
    std::error_code ignored;  // a destructor must not throw; a leftover folder is harmless
    std::filesystem::remove_all(dir, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  // A path in the folder, as the programs and readers under test take it.
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

}  // namespace tg::testing
