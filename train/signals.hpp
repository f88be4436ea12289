// Stopping a run cleanly, as clusters do before preempting a job: on the first SIGINT or
// SIGTERM the Trainer finishes the current step, writes its checkpoint (when it has one) and
// the partial results, and throws Interrupted; a second SIGINT ends the process at once.
#pragma once

#include <stdexcept>
#include <string>

namespace tg::train {

// Installs the handlers (the programs do it in guarded_main; call it in your own main).
void install_stop_handlers();
// The signal received since install_stop_handlers (or the last clear), or 0.
int pending_stop_signal();
void clear_stop_signal();
std::string signal_name(int signal);  // "SIGTERM"

// Thrown by Trainer::run after a stop signal, once everything is saved; programs exit with
// 128 + signal, the shell's convention.
struct Interrupted : std::runtime_error {
  Interrupted(int signal_number, const std::string& what)
      : std::runtime_error(what), signal(signal_number) {}
  int signal;
};

}  // namespace tg::train
