// Stopping a run cleanly, as clusters do before preempting a job: while a training loop runs
// (Trainer::run holds a StopSignalScope), the first SIGINT, SIGTERM or SIGHUP (a closed terminal,
// a dropped ssh connection) is recorded instead of
// ending the process; the loop finishes its step, writes its checkpoint (when it has one) and
// the partial results, and throws Interrupted. A second SIGINT ends the process at once.
// Outside such a loop the signals keep their default action (the process ends at once; files
// are written atomically, so none is left half-written), so that a program whose loop does not
// check them (word2vec, a benchmark) cannot ignore a Ctrl-C or a scheduler's SIGTERM.
#pragma once

#include <signal.h>

#include <stdexcept>
#include <string>

namespace tg::train {

// Installs the stop handlers for its lifetime and restores the previous ones after; scopes
// nest (the outermost installs and restores). A signal still pending when the outermost scope
// ends (it came after the loop's last check) is raised again then, under the restored handlers,
// so that it is not lost; a loop that handled it calls clear_stop_signal first. When the scope
// ends because an exception leaves it (a diverged run, a full disk), the signal is not raised:
// it would end the process before the error is reported. It stays pending instead, so that
// the next loop stops at its first check.
class StopSignalScope {
 public:
  StopSignalScope();
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  struct sigaction previous_hup_ {};
  bool outermost_ = false;
  int exceptions_ = 0;  // in flight when the scope began
};

// A run's last stretch that a stop cannot shorten (the final evaluation, after the checkpoint
// it resumes from is written): inside it, the first stop signal prints `note` (standard error)
// and is recorded as usual, and a second one of any kind ends the process at once, so that a
// scheduler or a user never waits an unbounded time for a stop. Not nested.
class FinalStretch {
 public:
  explicit FinalStretch(std::string note);
  ~FinalStretch();
  FinalStretch(const FinalStretch&) = delete;
  FinalStretch& operator=(const FinalStretch&) = delete;

 private:
  std::string note_;
};

// The signal received inside a StopSignalScope, or 0.
int pending_stop_signal();
void clear_stop_signal();  // handled: the scope's end does not raise it again
// pending_stop_signal agreed over the MPI ranks (a collective: every rank calls it after the
// same step): non-zero on every rank if any rank received a signal, so that all stop after the
// same step, or the collectives of the next step would hang. mpirun forwards a signal to all
// ranks, but not necessarily during the same step.
int agreed_stop_signal();
std::string signal_name(int signal);  // "SIGTERM"

// Thrown by Trainer::run after a stop signal, once everything is saved; programs exit with
// 128 + signal, the shell's convention.
struct Interrupted : std::runtime_error {
  Interrupted(int signal_number, const std::string& what)
      : std::runtime_error(what), signal(signal_number) {}
  int signal;
};

}  // namespace tg::train
