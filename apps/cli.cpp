#include "apps/cli.hpp"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string_view>

#include "base/build_info.hpp"
#include "base/machine.hpp"
#include "distributed/distributed.hpp"
#include "train/signals.hpp"

namespace tg::apps {

namespace {

// Under mpirun only rank 0 talks: the other ranks' stdout and stderr go to /dev/null, but
// their errors still reach the terminal through a saved copy of stderr. What the C library
// or a sanitizer prints before an abort does not: TAPEGRAD_ALL_RANKS_TALK=1 keeps every
// rank's output, for debugging a rank that dies.
int g_error_fd = STDERR_FILENO;

void quiet_other_ranks() {
  if (distributed::is_main()) return;
  if (const char* all = std::getenv("TAPEGRAD_ALL_RANKS_TALK"); all && std::string(all) == "1")
    return;
  g_error_fd = ::dup(STDERR_FILENO);
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (g_error_fd < 0 || null_fd < 0) return;  // keep talking rather than lose errors
  std::fflush(stdout), std::fflush(stderr);
  ::dup2(null_fd, STDOUT_FILENO);
  ::dup2(null_fd, STDERR_FILENO);
  ::close(null_fd);
}

}  // namespace

const char* version() {
  return base::version();
}

void add_version_flag(CLI::App& app) {
  app.set_version_flag("--version", std::string("tapegrad ") + version());
}

int guarded_main(const char* program, const std::function<int()>& body) {
  // A closed pipe (`train_lm | head`) or a file-size limit must be a write error we report,
  // not a silent death that loses the run: the results and checkpoints are files anyway.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  try {
    distributed::init();
    quiet_other_ranks();
    const int code = body();
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw std::runtime_error(std::string("cannot write to standard output: ") +
                               (errno ? std::strerror(errno) : "write error"));
    return code;
  } catch (const train::Interrupted& e) {
    // Everything is saved; the shell's convention for "ended by signal N". Rank 0 reports (it
    // wrote the files); the others leave after it has, because mpirun ends the job's remaining
    // ranks as soon as one exits with a non-zero status.
    if (distributed::is_main()) {
      const std::string text = "\n" + std::string(program) + ": " + e.what() + "\n";
      [[maybe_unused]] const ssize_t written = ::write(g_error_fd, text.data(), text.size());
    }
    if (distributed::size() > 1) distributed::barrier();
    return 128 + e.signal;
  } catch (const std::exception& e) {
    std::string text = "\n" + std::string(program) + ": error: ";
    if (distributed::size() > 1) text += "rank " + std::to_string(distributed::rank()) + ": ";
    // An allocation that fails outside a tensor (whose own message names its size) says only
    // "std::bad_alloc": say what it means.
    const bool bare_bad_alloc = dynamic_cast<const std::bad_alloc*>(&e) &&
                                std::string_view(e.what()) == std::bad_alloc().what();
    text += bare_bad_alloc ? "out of memory: an allocation failed (" +
                                 base::bytes_text(static_cast<double>(base::physical_memory())) +
                                 " installed; lower --batch, --context, --d-model, --hidden or "
                                 "--layers, or the vocabulary)"
                           : std::string(e.what());
    text += "\n";
    std::cerr.flush();
    [[maybe_unused]] const ssize_t written = ::write(g_error_fd, text.data(), text.size());
    // A failed rank must take the others down, or they wait in a collective for ever.
    if (distributed::size() > 1) distributed::abort(1);
    return 1;
  }
}

}  // namespace tg::apps
