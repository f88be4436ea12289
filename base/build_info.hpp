#pragma once
// What built this library: the project version and the source commit, written into every
// result file so that a number can be traced to the code that produced it.

namespace tg::base {

// The project version, e.g. "0.2.0".
const char* version();
// The commit the library was built from (12 hex digits), followed by "-dirty" when tracked
// files outside results/ differed from it at build time; "unknown" outside a git checkout.
const char* commit();

}  // namespace tg::base
