#pragma once
/// A streaming writer of the Trace Event Format (the JSON that
/// chrome://tracing and ui.perfetto.dev open): complete spans ("ph":"X"),
/// instants ("i"), counters ("C") and process/thread names ("M"). Events go
/// to the file as they come, so a long run needs no memory for its profile.
/// Timestamps are taken in nanoseconds and written exactly in the format's
/// microseconds ("ts":12.345).
///
///   dtr::trace::ChromeTraceWriter w("run.json");   // throws if unwritable
///   w.complete("relu", "op", /*ts_ns=*/1000, /*dur_ns=*/500, 1, 1,
///              {{"op", 3}});
///   w.close();   // throws dtr::Error naming the file if a write failed
#include <concepts>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include "dtr/trace/output_file.h"

namespace dtr::trace {

/// One entry of an event's "args": an integer (bool as 0/1), a real
/// (non-finite reals are written as the strings "inf", "-inf", "nan") or a
/// string.
struct TraceArg {
  enum class Kind { kInteger, kReal, kString };
  template <std::integral T>
  TraceArg(std::string_view k, T v)
      : key(k), kind(Kind::kInteger), integer(static_cast<std::int64_t>(v)) {}
  TraceArg(std::string_view k, double v) : key(k), kind(Kind::kReal), real(v) {}
  TraceArg(std::string_view k, std::string_view v)
      : key(k), kind(Kind::kString), text(v) {}
  std::string_view key;
  Kind kind;
  std::int64_t integer = 0;
  double real = 0;
  std::string_view text;
};
using TraceArgs = std::initializer_list<TraceArg>;

class ChromeTraceWriter {
 public:
  /// Creates or truncates `path`; throws dtr::Error naming it if it cannot.
  explicit ChromeTraceWriter(std::string path);
  /// Closes the file if close() was not called (errors are then lost).
  ~ChromeTraceWriter();
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  void process_name(int pid, std::string_view name);
  void thread_name(int pid, int tid, std::string_view name);
  /// A span [ts_ns, ts_ns + dur_ns] on thread `tid`; spans on one thread
  /// nest by time.
  void complete(std::string_view name, std::string_view category,
                std::int64_t ts_ns, std::int64_t dur_ns, int pid, int tid,
                TraceArgs args = {});
  /// A point event on thread `tid`.
  void instant(std::string_view name, std::string_view category,
               std::int64_t ts_ns, int pid, int tid, TraceArgs args = {});
  /// A sample of counter track `name`: one series per argument.
  void counter(std::string_view name, std::int64_t ts_ns, int pid,
               TraceArgs args);
  /// Ends the JSON document and closes the file; throws dtr::Error naming
  /// the path if anything could not be written. Idempotent.
  void close();
  const std::string& path() const { return path_; }

 private:
  void begin_event(std::string_view name, std::string_view phase,
                   std::int64_t ts_ns, int pid);
  void end_event(TraceArgs args);
  std::string path_;
  AtomicOutput file_;
  std::ofstream& out_;
  bool first_ = true;
  bool closed_ = false;
};

}  // namespace dtr::trace
