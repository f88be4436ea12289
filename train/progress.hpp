// Progress output of long runs: one line redrawn in place, and durations for humans.
#pragma once

#include <chrono>
#include <string>

namespace tg::train {

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

std::string format_duration(double seconds);  // "1h02m", "3m05s", "12.3s"

}  // namespace tg::train
