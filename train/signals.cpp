#include "train/signals.hpp"

#include <atomic>
#include <cstring>
#include <exception>
#include <utility>

#include <unistd.h>

#include "distributed/distributed.hpp"

namespace tg::train {

namespace {

std::atomic<int> g_pending{0};
int g_depth = 0;  // nesting of StopSignalScope (they are created on the main thread)
// Inside a FinalStretch: its note (owned by it), read by the handler.
std::atomic<const std::string*> g_final_note{nullptr};

extern "C" void on_stop_signal(int signal_number) {
  int none = 0;
  const std::string* final_note = g_final_note.load();
  if (g_pending.compare_exchange_strong(none, signal_number)) {  // the first: stop cleanly
    if (final_note)  // write(2) is async-signal-safe; the note was formatted beforehand
        [[maybe_unused]]
      const ssize_t written = ::write(2, final_note->data(), final_note->size());
    return;
  }
  // A second signal in the final stretch: nothing more is saved by waiting. Now.
  if (final_note) {
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
    return;
  }
  // A second Ctrl-C: the user means it. Default action, now. A repeated SIGTERM (or SIGHUP,
  // which a closed terminal or a dropped ssh connection sends) is absorbed:
  // launchers and schedulers send it to every process of a job and again through mpirun,
  // and a SIGKILL follows anyway when their grace period ends.
  if (signal_number == SIGINT) {
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }
}

}  // namespace

StopSignalScope::StopSignalScope() {
  if (g_depth++ > 0) return;
  outermost_ = true;
  exceptions_ = std::uncaught_exceptions();
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress go on
  ::sigaction(SIGINT, &action, &previous_int_);
  ::sigaction(SIGTERM, &action, &previous_term_);
  ::sigaction(SIGHUP, &action, &previous_hup_);
}

StopSignalScope::~StopSignalScope() {
  --g_depth;
  if (!outermost_) return;
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
  ::sigaction(SIGHUP, &previous_hup_, nullptr);
  if (std::uncaught_exceptions() > exceptions_) return;  // unwinding: the error comes first
  if (const int signal = g_pending.exchange(0)) ::raise(signal);
}

FinalStretch::FinalStretch(std::string note) : note_(std::move(note)) {
  g_final_note.store(&note_);
}
FinalStretch::~FinalStretch() {
  g_final_note.store(nullptr);
}

int pending_stop_signal() {
  return g_pending.load();
}
void clear_stop_signal() {
  g_pending.store(0);
}

int agreed_stop_signal() {
  const int signal = pending_stop_signal();
  if (distributed::size() == 1) return signal;
  double any = signal;
  distributed::sum(&any, 1);
  return any > 0 ? (signal ? signal : SIGTERM) : 0;
}

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

}  // namespace tg::train
