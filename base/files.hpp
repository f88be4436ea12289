// Files written so that nothing is lost: atomic replacement, and output paths checked before
// a long run rather than after it.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tg::base {

// Writes through `write` into a temporary file beside `path`, flushes it to disk, then
// renames it over `path`: readers see the old file or the new one, never half of one.
// Throws std::runtime_error naming the path and the system's reason if any step fails (the old
// file stays). A symlink at `path` is followed (the link stays a link); temporary files that
// killed writers left beside `path` are removed.
void atomic_write(const std::string& path, const std::function<void(std::ostream&)>& write);

// Throws std::invalid_argument, naming `what` (a flag) and the path, unless a file could be
// written at `path`: its folder exists and a file can be created in it (tried: a temporary
// file made and removed), and it is not itself a folder. For checking outputs before a long
// run rather than after it. An empty path passes.
void check_writable(const std::string& path, const std::string& what);

// Throws std::runtime_error naming the path and why it cannot be read as a file ("no such
// file", "a folder, not a file", "a pipe, not a regular file", ...) unless it is a regular
// file. A device or a pipe has no end to read to (/dev/zero) nor a size to check against.
void require_regular_file(const std::string& path);

// The last component of a path, a trailing separator ignored: "/a/b/bpe8k/" -> "bpe8k",
// "gpt2" -> "gpt2". How a study names the files it was given, so that a folder moved or cloned
// elsewhere is the same study.
std::string last_path_component(const std::string& path);

// The folders inside `root` at any depth, sorted, `root` itself not among them. A link is not
// followed, neither a linked folder nor anything below it: every folder found lies inside
// `root`, so what a program writes there stays inside it. None when `root` is not a folder.
std::vector<std::filesystem::path> folders_inside(const std::filesystem::path& root);

// Whether some component of `inside` (a path relative to `root`) is a link: a file written at
// root / inside would then land outside `root`. Components that do not exist yet are no link.
bool behind_link(const std::filesystem::path& root, const std::filesystem::path& inside);

// A file a program was given, by its flag: {"--results", "run.json"}. An empty path is unused.
struct FileFlag {
  std::string flag, path;
};

// Checks a program's outputs before it reads or trains anything: each is writable
// (check_writable) and, if it exists, a regular file (atomic_write renames a new file into
// place, which would replace a device or a pipe: /dev/null, /dev/stdout), and none is the same
// file as an input or another output (by path with symlinks followed, or by inode), except
// the flag pairs in `allowed` (a checkpoint resumed and written again). Throws
// std::invalid_argument naming both flags and paths.
void check_outputs(std::span<const FileFlag> outputs, std::span<const FileFlag> inputs,
                   std::span<const std::pair<std::string, std::string>> allowed = {});

// An advisory lock (flock) on a lock file, held until destroyed or until its process ends,
// however it ends (the kernel releases it), so a killed program never leaves a path locked.
// A holder may delete the lock file (remove_when_done, or by hand once done): a process that
// locked a file deleted or replaced meanwhile lets go and tries the new one, so no two
// processes ever hold locks on two files of one path.
class FileLock {
 public:
  // Waits for the lock when `wait`; otherwise takes it only if no one holds it (held()).
  // Throws std::runtime_error naming the path if the file cannot be opened or locked.
  FileLock(const std::string& path, bool wait, bool remove_when_done = false);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }
  // Replaces the lock file's content (the holder says what it does under the lock).
  void write(const std::string& text) const;

 private:
  std::string path_;
  int fd_ = -1;
  bool remove_when_done_ = false;
};

}  // namespace tg::base
