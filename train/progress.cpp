#include "train/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace tg::train {

LiveLine::LiveLine(double log_interval_s)
    : tty_(::isatty(STDERR_FILENO) != 0),
      interval_(log_interval_s),
      last_(std::chrono::steady_clock::now()) {}

void LiveLine::update(const std::string& text) {
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    std::fprintf(stderr, "\r%s%*s", text.c_str(),
                 static_cast<int>(width_ > text.size() ? width_ - text.size() : 0), "");
    std::fflush(stderr);
    width_ = text.size();
  } else if (!printed_ || std::chrono::duration<double>(now - last_).count() >= interval_) {
    std::fprintf(stderr, "%s\n", text.c_str());
    last_ = now;
  }
  printed_ = true;
}

void LiveLine::finish(const std::string& text) {
  if (tty_)
    std::fprintf(stderr, "\r%s%*s\n", text.c_str(),
                 static_cast<int>(width_ > text.size() ? width_ - text.size() : 0), "");
  else
    std::fprintf(stderr, "%s\n", text.c_str());
  width_ = 0;
}

std::string format_duration(double s) {
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s / 3600),
                  static_cast<int>(s / 60) % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  return buf;
}

}  // namespace tg::train
