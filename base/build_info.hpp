#pragma once
// What built this library and what ran it: the project version, the source commit, the build
// type and the process's command line, written into every result file so that a number can be
// traced to the code and the command that produced it.

#include <string>
#include <vector>

namespace tg::base {

// The project version, e.g. "0.2.0".
const char* version();
// The commit the library was built from (12 hex digits), followed by "-dirty" when tracked
// files outside results/ differed from it at build time; "unknown" outside a git checkout.
const char* commit();
// The CMake build type ("Release", "Debug", ...; "" when none was set).
const char* build_type();

// The command line of this process (program and arguments), as the program recorded it at
// start (apps::start_program does, for every program of the project and of its examples);
// empty when none was recorded.
void record_command_line(char** argv);
const std::vector<std::string>& command_line();

}  // namespace tg::base
