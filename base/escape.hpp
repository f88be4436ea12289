// Bytes from a file or a user, shown in a message: a control byte, DEL or NUL cannot move the
// cursor, end the line or cut the message short.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tg::base {

// Each control byte and DEL as \xHH; bytes of 0x80 and above as they are (UTF-8 text reads as
// text), or also as \xHH with `ascii_only` (a token's bytes, which need not be whole UTF-8).
inline std::string escape_bytes(std::string_view s, bool ascii_only = false) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F || (ascii_only && c >= 0x80)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// nlohmann::json's exception text without its tag ("[json.exception.parse_error.101] "): the
// reader is told where and why the file is not JSON, not the library's error number.
inline std::string json_error_text(const char* what) {
  const std::string_view text(what);
  if (!text.starts_with("[json.exception.")) return std::string(text);
  const size_t end = text.find("] ");
  return std::string(end == std::string_view::npos ? text : text.substr(end + 2));
}

}  // namespace tg::base
