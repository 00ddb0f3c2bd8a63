#pragma once
/// Text that JSON writers and parsers accept: names come from file names
/// and traces, which may hold any bytes.
#include <string>
#include <string_view>

namespace dtr::trace {

/// `s` with every byte sequence that is not well-formed UTF-8 (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF) replaced by
/// U+FFFD.
inline std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = [&](std::size_t k) {
      return static_cast<unsigned char>(s[i + k]);
    };
    const auto cont = [&](std::size_t k) {
      return i + k < s.size() && (b(k) & 0xC0) == 0x80;
    };
    unsigned char c = b(0);
    std::size_t n = 0;
    if (c < 0x80) {
      n = 1;
    } else if (c >= 0xC2 && c <= 0xDF && cont(1)) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF && cont(1) && cont(2)) {
      bool overlong = c == 0xE0 && b(1) < 0xA0;
      bool surrogate = c == 0xED && b(1) >= 0xA0;
      n = (overlong || surrogate) ? 0 : 3;
    } else if (c >= 0xF0 && c <= 0xF4 && cont(1) && cont(2) && cont(3)) {
      bool overlong = c == 0xF0 && b(1) < 0x90;
      bool too_big = c == 0xF4 && b(1) >= 0x90;
      n = (overlong || too_big) ? 0 : 4;
    }
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace dtr::trace
