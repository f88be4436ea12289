// Shared by the command-line programs: the error boundary of main.
#pragma once

#include <functional>
#include <string>

namespace tg::cli {

// Runs body; an exception becomes "<program>: error: <message>" on stderr and exit code 1.
int guarded_main(const char* program, const std::function<int()>& body);

}  // namespace tg::cli
