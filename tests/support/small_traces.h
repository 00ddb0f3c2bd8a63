#pragma once
// Two hand-checked traces shared by the simulator, sweep and program source
// tests. The comments derive every number those tests expect, so that the
// expectations do not come from the code under test.
#include <sstream>
#include <string>

#include "dtr/trace/trace_writer.h"

namespace dtr::sim::small_traces {

// Trace A: one op whose working set is the peak.
//   x1 constant 100
//   f(x1) -> x2 200, 10 ns
//   g(x2) -> x3 300, 20 ns     live: x1 x2 x3 = 600 (peak)
//   release x2
//   h(x3) -> x4 50, 30 ns
//   release x3                 outputs at the end: x1, x4
// Baseline: peak 600, compute 60 ns, 4 trace ops. Any budget under 600 is
// out of memory (g needs x1, x2 and x3 at once).
inline std::string trace_a_text() {
  std::ostringstream out;
  trace::TraceWriter w(out);
  w.constant("x1", 100);
  w.call("f", {"x1"}, {{"x2", 200, -1}}, 10);
  w.call("g", {"x2"}, {{"x3", 300, -1}}, 20);
  w.release("x2");
  w.call("h", {"x3"}, {{"x4", 50, -1}}, 30);
  w.release("x3");
  return out.str();
}

// Trace C: x2 is kept for a late use while a chain passes through, so a
// budget under the peak forces exactly one eviction (x2, the only candidate)
// and one rematerialization (a, 10 ns).
//   x1 constant 10
//   a(x1) -> x2 100            10 ns
//   b(x2) -> x3 100            10 ns
//   c(x3) -> x4 100            10 ns   live: 10+100+100+100 = 310 (peak)
//   release x3
//   d(x2, x4) -> x5 10         10 ns   working set 10+100+100+10 = 220
//   release x2, release x4     outputs at the end: x1, x5
// Baseline: peak 310, compute 40 ns, 5 trace ops. A budget in [220, 310)
// runs with one replay of a (overhead 50/40); under 220 it is out of memory.
inline std::string trace_c_text() {
  std::ostringstream out;
  trace::TraceWriter w(out);
  w.constant("x1", 10);
  w.call("a", {"x1"}, {{"x2", 100, -1}}, 10);
  w.call("b", {"x2"}, {{"x3", 100, -1}}, 10);
  w.call("c", {"x3"}, {{"x4", 100, -1}}, 10);
  w.release("x3");
  w.call("d", {"x2", "x4"}, {{"x5", 10, -1}}, 10);
  w.release("x2");
  w.release("x4");
  return out.str();
}

}  // namespace dtr::sim::small_traces
