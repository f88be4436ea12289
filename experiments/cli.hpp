// Shared by the command-line programs: the live progress line, the error boundary of main,
// and timing.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace tg::cli {

// One progress line, redrawn in place on a terminal; on a pipe or file, a plain line every
// few seconds instead (so logs stay readable).
class LiveLine {
 public:
  explicit LiveLine(double log_interval_s = 5.0);
  void update(const std::string& text);
  void finish(const std::string& text);  // final state, then a newline

 private:
  bool tty_;
  double interval_;
  std::chrono::steady_clock::time_point last_;
  size_t width_ = 0;
  bool printed_ = false;
};

// Runs body; an exception becomes "<program>: error: <message>" on stderr and exit code 1.
int guarded_main(const char* program, const std::function<int()>& body);

std::string format_duration(double seconds);  // "1h02m", "3m05s", "12.3s"

}  // namespace tg::cli
