#pragma once
/// Checked output: every file and stream dtr writes results to goes through
/// these, so a result that was not written (disk full, /dev/full, a closed
/// pipe, a directory in the way) is an error instead of a silent success.
/// Header-only; the CLI, the simulator, the reports and the LibTorch trainer
/// all write through it.
///
///   std::ofstream f(path);
///   dtr::trace::TraceWriter w(f);
///   build(w);
///   dtr::trace::close_output(f, path);  // throws dtr::Error naming `path`
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "dtr/core/error.h"

namespace dtr::trace {

namespace detail {
inline std::string output_failure(std::string_view what) {
  std::string message = "[write] cannot write " + std::string(what);
  if (errno != 0) message += std::string(": ") + std::strerror(errno);
  return message;
}
}  // namespace detail

/// Flushes and closes `out` (opened on `path`). Throws dtr::Error naming
/// `path` if the file could not be opened or any write, the flush or the
/// close failed.
inline void close_output(std::ofstream& out, const std::string& path) {
  // A stream that failed earlier keeps the errno of that failure (best
  // effort); otherwise the reason is the flush's or the close's.
  if (out.good()) errno = 0;
  if (out.is_open()) {
    out.flush();
    out.close();
  } else {
    out.setstate(std::ios::failbit);
  }
  if (out.fail()) throw Error(detail::output_failure(path));
}

/// Creates or truncates `path`, writes `text`, closes it; throws as
/// close_output.
inline void write_output(const std::string& path, std::string_view text) {
  errno = 0;  // an open that fails sets it
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  close_output(out, path);
}

/// Flushes std::cout and C's stdout (dtr writes to both); throws dtr::Error
/// if anything written to standard output was lost.
inline void flush_stdout() {
  errno = 0;
  std::cout.flush();
  bool lost =
      std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout.good();
  if (lost) throw Error(detail::output_failure("standard output"));
}

}  // namespace dtr::trace
