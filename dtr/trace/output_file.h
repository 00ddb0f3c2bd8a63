#pragma once
/// Checked output: every file and stream dtr writes results to goes through
/// these, so a result that was not written (disk full, /dev/full, a closed
/// pipe, a directory in the way) is an error instead of a silent success.
/// Header-only; the CLI, the simulator, the reports and the LibTorch trainer
/// all write through it.
///
/// A result file is written whole or not at all: AtomicOutput writes beside
/// its destination under a temporary name and renames onto it only once
/// everything was written. A reader, a second run writing the same file, a
/// full disk or a kill -9 mid-write leaves either the previous complete
/// file or the new complete one, never a mix or a truncated one.
///
///   dtr::trace::AtomicOutput out(path);
///   dtr::trace::TraceWriter w(out.stream());
///   build(w);
///   out.commit();  // throws dtr::Error naming `path`
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

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

/// A file written under a temporary name in its destination's folder
/// (`.NAME.tmp-PID-N`) and renamed onto `path` by commit(). Destroyed
/// without a commit (an exception on the way), it removes the temporary
/// file and leaves `path` as it was. A destination that exists and is not
/// a regular file (/dev/stdout, /dev/full, a pipe) is written in place:
/// renaming onto it would replace the device or the pipe.
class AtomicOutput {
 public:
  explicit AtomicOutput(std::string path) : path_(std::move(path)) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::file_status st = fs::status(path_, ec);
    bool in_place = fs::exists(st) && !fs::is_regular_file(st);
    if (!in_place) temp_ = temporary_name(path_);
    errno = 0;  // an open that fails sets it
    out_.open(in_place ? path_ : temp_, std::ios::binary | std::ios::trunc);
  }
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;
  ~AtomicOutput() {
    if (committed_ || temp_.empty()) return;
    out_.close();
    std::remove(temp_.c_str());
  }

  std::ofstream& stream() { return out_; }
  const std::string& path() const { return path_; }

  /// Closes the file and puts it in place; throws dtr::Error naming the
  /// destination if any write failed or the rename did.
  void commit() {
    close_output(out_, path_);
    if (!temp_.empty() && std::rename(temp_.c_str(), path_.c_str()) != 0) {
      throw Error(detail::output_failure(path_));
    }
    committed_ = true;
  }

 private:
  static std::string temporary_name(const std::string& path) {
    static std::atomic<unsigned> counter{0};
    std::filesystem::path p(path);
    std::string name = "." + p.filename().string() + ".tmp-" +
                       std::to_string(::getpid()) + "-" +
                       std::to_string(counter++);
    return (p.parent_path() / name).string();
  }

  std::string path_;
  std::string temp_;  ///< empty: written in place
  std::ofstream out_;
  bool committed_ = false;
};

/// Writes `text` to `path` atomically (AtomicOutput); throws as commit().
inline void write_output(const std::string& path, std::string_view text) {
  AtomicOutput out(path);
  out.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  out.commit();
}

/// Throws dtr::Error if `output` names the same file as one of `inputs`:
/// writing it would destroy the input it is computed from.
inline void refuse_overwriting_inputs(const std::string& output,
                                      const std::vector<std::string>& inputs,
                                      std::string_view option) {
  std::error_code ec;
  for (const std::string& input : inputs) {
    if (std::filesystem::equivalent(output, input, ec) && !ec) {
      throw Error("[" + std::string(option) + "] " + output +
                  " is also an input (" + input +
                  "): dtr does not overwrite its inputs");
    }
  }
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
