// Starting other programs without a shell.
#pragma once

#include <string>
#include <vector>

namespace tg::base {

// Runs a program with an argument vector, found on PATH, in `directory` (empty: here), and
// returns its exit status (128 + N if signal N ended it). No shell is involved, so no text in
// the arguments (paths, environment values) is ever interpreted. Throws if it cannot start.
enum class ProgramOutput { keep, to_stderr, discard };
int run_program(const std::vector<std::string>& args, ProgramOutput output = ProgramOutput::keep,
                const std::string& directory = "");

}  // namespace tg::base
