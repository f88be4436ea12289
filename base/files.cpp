#include "base/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <streambuf>
#include <vector>

namespace tg::base {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

}  // namespace

namespace {

// A symlink is followed, so that its target is replaced and the link stays.
std::filesystem::path write_target(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

// Temporary files "<name>.tmp.<pid>" left by writers that were killed (their pid is gone).
void remove_stale_temporaries(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = target.filename().string() + ".tmp.";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(it->path(), ec);
  }
}

}  // namespace

namespace {

// Whether two paths name one file: the same path once symlinks and dots are resolved, or
// (both existing) the same inode, which also catches hard links and bind mounts.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec_a, ec_b;
  const fs::path resolved_a = fs::weakly_canonical(fs::absolute(write_target(a)), ec_a);
  const fs::path resolved_b = fs::weakly_canonical(fs::absolute(write_target(b)), ec_b);
  if (!ec_a && !ec_b && resolved_a == resolved_b) return true;
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

std::string kind_of(const struct stat& s) {
  if (S_ISCHR(s.st_mode)) return "a character device";
  if (S_ISBLK(s.st_mode)) return "a block device";
  if (S_ISFIFO(s.st_mode)) return "a pipe";
  if (S_ISSOCK(s.st_mode)) return "a socket";
  if (S_ISDIR(s.st_mode)) return "a folder";
  return "a special file";  // none of the above (stat follows links)
}

}  // namespace

void require_regular_file(const std::string& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) {
    const int error = errno;
    throw std::runtime_error(path + (error == ENOENT
                                         ? std::string(": no such file")
                                         : std::string(": cannot read: ") + std::strerror(error)));
  }
  if (S_ISREG(s.st_mode)) return;
  if (S_ISDIR(s.st_mode)) throw std::runtime_error(path + ": a folder, not a file");
  throw std::runtime_error(path + ": " + kind_of(s) + ", not a regular file: give a file");
}

std::string last_path_component(const std::string& path) {
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

void check_outputs(std::span<const FileFlag> outputs, std::span<const FileFlag> inputs,
                   std::span<const std::pair<std::string, std::string>> allowed) {
  const auto may_share = [&](const std::string& x, const std::string& y) {
    for (const auto& [p, q] : allowed)
      if ((p == x && q == y) || (p == y && q == x)) return true;
    return false;
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const FileFlag& out = outputs[i];
    if (out.path.empty()) continue;
    struct stat s {};
    if (::stat(out.path.c_str(), &s) == 0 && !S_ISREG(s.st_mode) && !S_ISDIR(s.st_mode))
      throw std::invalid_argument(out.flag + " " + out.path + ": is " + kind_of(s) +
                                  "; outputs are written to a new file renamed into place, so "
                                  "give the name of a regular file");
    check_writable(out.path, out.flag);
    const auto refuse = [&](const FileFlag& other, const char* what) {
      throw std::invalid_argument(out.flag + " " + out.path + " is the same file as " + other.flag +
                                  " " + other.path + ": " + what);
    };
    for (const FileFlag& in : inputs)
      if (!in.path.empty() && !may_share(out.flag, in.flag) && same_file(out.path, in.path))
        refuse(in, "the output would replace the input");
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
        refuse(outputs[j], "one output would overwrite the other");
  }
}

void check_writable(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  const fs::path target = write_target(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  const auto dir_status = fs::status(dir, ec);
  if (!fs::exists(dir_status))
    throw std::invalid_argument(what + " " + path + ": the folder " + dir.string() +
                                " does not exist");
  if (!fs::is_directory(dir_status))
    throw std::invalid_argument(what + " " + path + ": " + dir.string() + " is not a folder");
  if (fs::is_directory(fs::status(target, ec)))
    throw std::invalid_argument(what + " " + path + ": is a folder, not a file name");
  // A file is created and removed rather than the folder's permissions read: root passes any
  // permission check, yet cannot create files in /proc or on a read-only file system. The name
  // is atomic_write's temporary one, which a later write sweeps up if this process is killed.
  const fs::path probe = dir / (target.filename().string() + ".tmp." + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EEXIST)
    throw std::invalid_argument(what + " " + path + ": cannot create a file in " + dir.string() +
                                ": " + std::strerror(errno));
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
}

namespace {

// An output stream buffer over a file descriptor that keeps the errno of a failed write, so
// that the error says "No space left on device" or "File too large", not "write failed".
class FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd), buffer_(1 << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= epptr() - pptr()) {
      std::memcpy(pptr(), s, static_cast<size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    return drain() && write_all(s, static_cast<size_t>(n)) ? n : 0;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const size_t n = static_cast<size_t>(pptr() - pbase());
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return n == 0 || write_all(buffer_.data(), n);
  }
  bool write_all(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t written = ::write(fd_, p, n);
      if (written < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      p += written, n -= static_cast<size_t>(written);
    }
    return true;
  }
  int fd_, error_ = 0;
  std::vector<char> buffer_;
};

}  // namespace

void atomic_write(const std::string& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path target = write_target(path);
  // Renaming over a device or a pipe would replace it (as root, /dev/null itself); a file
  // that is there keeps its permissions (a private results file stays private).
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode))
    fail(path, "is " + kind_of(existing) + ", not a regular file: it would be replaced");
  remove_stale_temporaries(target);
  const fs::path temp =
      target.parent_path() / (target.filename().string() + ".tmp." + std::to_string(::getpid()));
  auto discard = [&temp] {
    std::error_code ignored;
    fs::remove(temp, ignored);
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    fail(path,
         "cannot open temporary file " + temp.string() + " for writing: " + std::strerror(errno));
  int error = 0;
  if (exists) {
    if (::fchmod(fd, existing.st_mode & 07777) != 0) error = errno;
    // The owner too, where we may (as root); otherwise the file becomes ours, as any rewrite.
    if (::fchown(fd, existing.st_uid, existing.st_gid) != 0 && errno != EPERM) error = errno;
  }
  {
    FdBuffer buffer(fd);
    std::ostream out(&buffer);
    try {
      write(out);
    } catch (...) {
      ::close(fd);
      discard();
      throw;
    }
    out.flush();
    if (!out && error == 0) error = buffer.error() ? buffer.error() : EIO;
  }
  // fsync so that a crash after the rename cannot leave an empty file in place.
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    discard();
    fail(path, std::string("write failed: ") + std::strerror(error));
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    const std::string reason = ec.message();
    discard();
    fail(path, "cannot rename temporary file into place: " + reason);
  }
}

FileLock::FileLock(const std::string& path, bool wait, bool remove_when_done)
    : path_(path), remove_when_done_(remove_when_done) {
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw std::runtime_error(path + ": cannot open the lock file (" + std::strerror(errno) + ")");
    int rc;
    do rc = ::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int error = errno;
      ::close(fd);
      if (error != EWOULDBLOCK)
        throw std::runtime_error(path + ": cannot lock (" + std::strerror(error) + ")");
      return;  // held by another process
    }
    // Locked: still the file at `path`? (Its last holder may have deleted it after we opened it.)
    struct stat locked {
    }, at_path{};
    if (::fstat(fd, &locked) == 0 && ::stat(path.c_str(), &at_path) == 0 &&
        locked.st_dev == at_path.st_dev && locked.st_ino == at_path.st_ino) {
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  if (remove_when_done_) ::unlink(path_.c_str());  // while still holding it: see the constructor
  ::close(fd_);
}

void FileLock::write(const std::string& text) const {
  if (fd_ < 0 || ::ftruncate(fd_, 0) != 0) return;
  [[maybe_unused]] const ssize_t written = ::pwrite(fd_, text.data(), text.size(), 0);
}

std::vector<std::filesystem::path> folders_inside(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> folders;
  if (!std::filesystem::is_directory(root)) return folders;
  // The iterator does not descend through a link unless told to (follow_directory_symlink).
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
    if (!entry.is_symlink() && entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  return folders;
}

bool behind_link(const std::filesystem::path& root, const std::filesystem::path& inside) {
  std::filesystem::path at = root;
  for (const auto& component : inside) {
    at /= component;
    if (std::filesystem::is_symlink(at)) return true;
  }
  return false;
}

}  // namespace tg::base
