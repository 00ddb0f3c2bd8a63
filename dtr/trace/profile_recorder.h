#pragma once
/// A RuntimeObserver (dtr/core/observer.h) that writes what the runtime does
/// as a Chrome trace (chrome_trace.h), one file per run: a span per
/// operator and per replay (nested under the access that caused it), an
/// instant per eviction (storage, bytes, score), and the counter track
/// "dtr bytes". Frontends add their own spans (begin_span / end_span) and
/// counters. See docs/profiling.md for what each track means.
///
///   dtr::trace::ProfileRecorder profile("run.json",
///                                       dtr::trace::ProfileClock::kRuntime,
///                                       "dtr sim resnet");
///   runtime.set_observer(&profile);
///   ...   // calls
///   runtime.set_observer(nullptr);
///   profile.close();   // throws dtr::Error naming the file on a failed write
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/core/observer.h"
#include "dtr/trace/chrome_trace.h"

namespace dtr::trace {

/// Which clock timestamps the events: the runtime's (the simulated time of
/// `dtr sim`: the sum of charged op costs) or wall time since the recorder
/// was created (a real run, `dtr train`).
enum class ProfileClock { kRuntime, kWall };

class ProfileRecorder : public RuntimeObserver {
 public:
  /// Opens `path` (throws dtr::Error naming it if it cannot be created)
  /// and names the process `process_name` in the viewer.
  ProfileRecorder(std::string path, ProfileClock clock,
                  std::string_view process_name);

  void on_op_begin(std::int64_t clock_ns) override;
  void on_op_end(const Graph& graph, OpId op, bool completed,
                 std::int64_t clock_ns) override;
  void on_replay_begin(const Graph& graph, TensorId t,
                       std::int64_t clock_ns) override;
  void on_replay_end(const Graph& graph, TensorId t, bool completed,
                     std::int64_t clock_ns) override;
  void on_evicted(const Graph& graph, const EvictionEvent& event) override;
  void on_memory_changed(std::int64_t bytes, std::int64_t clock_ns) override;

  /// A frontend's own span (e.g. a kernel around its two-phase call):
  /// begin_span opens it, end_span closes the innermost open span.
  void begin_span(std::int64_t clock_ns = 0);
  void end_span(std::string_view name, std::string_view category,
                std::int64_t clock_ns = 0);
  /// A sample of counter track `name` (series `series`).
  void counter(std::string_view name, std::string_view series,
               std::int64_t value, std::int64_t clock_ns = 0);
  /// The event time for a runtime clock reading `clock_ns` (ignored with
  /// the wall clock).
  std::int64_t now_ns(std::int64_t clock_ns) const;
  /// Closes spans left open (a run that threw) and the file; throws
  /// dtr::Error naming the file if anything could not be written.
  void close();

 private:
  struct Span {
    std::string name;
    std::string_view category;  // a literal
    std::int64_t begin_ns = 0, end_ns = 0;
    std::int64_t op = -1, tensor = -1;  // args, when >= 0
    bool completed = true;
  };
  void close_span(Span span);
  void write_span(const Span& span);

  ChromeTraceWriter writer_;
  ProfileClock clock_;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::int64_t> open_;  // start times of the open spans
  std::vector<Span> closed_;        // inside an open span, see the Note
};

}  // namespace dtr::trace
