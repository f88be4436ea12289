// A test's stand-in for a program's own SIGTERM handler: it records the signal instead of
// ending the test, so that a test can check that a signal the Trainer handled was not passed
// on (and that one it did not handle was).
#pragma once

#include <atomic>
#include <csignal>
#include <cstring>

namespace tg::testing {

// The last SIGTERM that reached the recording handler (0: none).
inline std::atomic<int> g_passed_on{0};
extern "C" inline void record_passed_on(int signal) {
  g_passed_on = signal;
}

// The recording handler, for the life of the object.
class RecordedSigterm {
 public:
  RecordedSigterm() {
    struct sigaction record;
    std::memset(&record, 0, sizeof record);
    record.sa_handler = record_passed_on;
    sigemptyset(&record.sa_mask);
    ::sigaction(SIGTERM, &record, &previous_);
    g_passed_on = 0;
  }
  ~RecordedSigterm() { ::sigaction(SIGTERM, &previous_, nullptr); }
  RecordedSigterm(const RecordedSigterm&) = delete;
  RecordedSigterm& operator=(const RecordedSigterm&) = delete;

 private:
  struct sigaction previous_;
};

}  // namespace tg::testing
