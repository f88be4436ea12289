// Files written so that nothing is lost: atomic replacement, and output paths checked before
// a long run rather than after it.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace tg::base {

// Writes through `write` into a temporary file beside `path`, flushes it to disk, then
// renames it over `path`: readers see the old file or the new one, never half of one.
// Throws std::runtime_error naming the path and the system's reason if any step fails (the old
// file stays). A symlink at `path` is followed (the link stays a link); temporary files that
// killed writers left beside `path` are removed.
void atomic_write(const std::string& path, const std::function<void(std::ostream&)>& write);

// Throws std::invalid_argument, naming `what` (a flag) and the path, unless a file could be
// written at `path`: its folder exists and is writable, and it is not itself a folder. For
// checking outputs before a long run rather than after it. An empty path passes.
void check_writable(const std::string& path, const std::string& what);

}  // namespace tg::base
