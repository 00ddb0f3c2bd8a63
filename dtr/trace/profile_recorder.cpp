#include "dtr/trace/profile_recorder.h"

#include <algorithm>

namespace dtr::trace {

namespace {
constexpr int kPid = 1;
constexpr int kTid = 1;  // Note [One track for spans]
}  // namespace

// Note [One track for spans]
// Operators, replays and evictions share one thread track: the viewer nests
// complete events on a track by time, so a replay appears under the
// operator (or the replay) whose access caused it, as the runtime's frame
// stack had it. On the simulated clock a span and its first replay start
// at the same time; viewers then rely on the file's order (parent first),
// so spans closed inside an open one wait in closed_ and are written,
// outermost first, when the outermost span closes.

ProfileRecorder::ProfileRecorder(std::string path, ProfileClock clock,
                                 std::string_view process_name)
    : writer_(std::move(path)),
      clock_(clock),
      start_(std::chrono::steady_clock::now()) {
  writer_.process_name(kPid, process_name);
  writer_.thread_name(kPid, kTid, "runtime");
}

std::int64_t ProfileRecorder::now_ns(std::int64_t clock_ns) const {
  if (clock_ == ProfileClock::kRuntime) return clock_ns;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now() - start_)
      .count();
}

void ProfileRecorder::begin_span(std::int64_t clock_ns) {
  open_.push_back(now_ns(clock_ns));
}

void ProfileRecorder::end_span(std::string_view name, std::string_view category,
                               std::int64_t clock_ns) {
  close_span({std::string(name), category, 0, clock_ns});
}

// `span.end_ns` holds the runtime clock at the close; made a time here.
void ProfileRecorder::close_span(Span span) {
  if (open_.empty()) return;  // unbalanced: nothing to close
  span.begin_ns = open_.back();
  span.end_ns = now_ns(span.end_ns);
  open_.pop_back();
  closed_.push_back(std::move(span));
  if (!open_.empty()) return;
  // Closing order is post-order (children first); reversed, it is the
  // parents-first order of a depth-first walk from the right: sorting it
  // stably by start time gives the pre-order, parents first.
  std::reverse(closed_.begin(), closed_.end());
  std::stable_sort(
      closed_.begin(), closed_.end(),
      [](const Span& a, const Span& b) { return a.begin_ns < b.begin_ns; });
  for (const Span& s : closed_) write_span(s);
  closed_.clear();
}

void ProfileRecorder::write_span(const Span& s) {
  const std::int64_t dur = s.end_ns - s.begin_ns;
  const std::int64_t completed = s.completed;
  if (s.tensor >= 0) {
    writer_.complete(
        s.name, s.category, s.begin_ns, dur, kPid, kTid,
        {{"op", s.op}, {"tensor", s.tensor}, {"completed", completed}});
  } else if (s.op >= 0) {
    writer_.complete(s.name, s.category, s.begin_ns, dur, kPid, kTid,
                     {{"op", s.op}, {"completed", completed}});
  } else {
    writer_.complete(s.name, s.category, s.begin_ns, dur, kPid, kTid);
  }
}

void ProfileRecorder::counter(std::string_view name, std::string_view series,
                              std::int64_t value, std::int64_t clock_ns) {
  writer_.counter(name, now_ns(clock_ns), kPid, {{series, value}});
}

void ProfileRecorder::on_op_begin(std::int64_t clock_ns) {
  begin_span(clock_ns);
}

void ProfileRecorder::on_op_end(const Graph& graph, OpId op, bool completed,
                                std::int64_t clock_ns) {
  close_span(
      {std::string(graph.op(op).name), "op", 0, clock_ns, op, -1, completed});
}

void ProfileRecorder::on_replay_begin(const Graph& /*graph*/, TensorId /*t*/,
                                      std::int64_t clock_ns) {
  begin_span(clock_ns);
}

void ProfileRecorder::on_replay_end(const Graph& graph, TensorId t,
                                    bool completed, std::int64_t clock_ns) {
  const OpId op = graph.tensor(t).op;
  close_span({std::string(graph.op(op).name), "replay", 0, clock_ns, op, t,
              completed});
}

void ProfileRecorder::on_evicted(const Graph& /*graph*/,
                                 const EvictionEvent& e) {
  const std::int64_t ts = now_ns(e.clock_ns);
  if (e.eager) {
    writer_.instant("eager evict", "eviction", ts, kPid, kTid,
                    {{"storage", e.storage}, {"bytes", e.bytes}});
  } else {
    writer_.instant(
        "evict", "eviction", ts, kPid, kTid,
        {{"storage", e.storage}, {"bytes", e.bytes}, {"score", e.score}});
  }
}

void ProfileRecorder::on_memory_changed(std::int64_t bytes,
                                        std::int64_t clock_ns) {
  counter("dtr bytes", "dtr_bytes", bytes, clock_ns);
}

void ProfileRecorder::close() {
  // Zero length on the runtime clock (its time is unknown here).
  while (!open_.empty()) close_span({"(unfinished)", "op", 0, open_.back()});
  writer_.close();
}

}  // namespace dtr::trace
