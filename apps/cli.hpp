// Shared by the command-line programs: the error boundary of main, and --version.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace tg::apps {

const char* version();                 // the project's version, "0.2.0"
void add_version_flag(CLI::App& app);  // --version prints "tapegrad 0.2.0"

// Runs body; an exception becomes "<program>: error: <message>" on stderr and exit code 1.
int guarded_main(const char* program, const std::function<int()>& body);

}  // namespace tg::apps
