// Writes a small trace with the trace library, reads it back and replays it
// under half of its peak memory with each heuristic. Links dtr::trace and
// dtr::sim only (no LibTorch).
//
//   build/examples/simulate_trace
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/trace_reader.h"
#include "dtr/trace/trace_writer.h"

int main() {
  // A forward chain x0 -> x1 -> ... -> x8 (1 MiB each, 1 ms per op), then a
  // "backward" that reads every activation again in reverse.
  std::ostringstream text;
  dtr::trace::TraceWriter w(text);
  w.annotate("START");
  w.constant("x0", 1 << 20);
  for (int i = 1; i <= 8; ++i) {
    w.call("layer", {"x" + std::to_string(i - 1)},
           {{"x" + std::to_string(i), 1 << 20}}, 1'000'000);
  }
  // Each activation and gradient is released after its last use, so only
  // the last gradient is still held at the end.
  std::string grad = "x8";
  for (int i = 7; i >= 0; --i) {
    std::string next = "g" + std::to_string(i);
    std::string x = "x" + std::to_string(i);
    w.call("layer_backward", {grad, x}, {{next, 1 << 20}}, 2'000'000);
    w.release(grad);
    if (i > 0) w.release(x);
    grad = next;
  }

  std::istringstream in(text.str());
  dtr::trace::Program program = dtr::trace::read_trace(in, "chain");
  dtr::sim::Baseline baseline = dtr::sim::compute_baseline(program);
  std::printf("%zu ops, peak %lld bytes without a budget\n",
              program.trace_ops(), static_cast<long long>(baseline.peak_bytes));
  for (const std::string& h : dtr::heuristic_names()) {
    dtr::sim::SimConfig config;
    config.heuristic = h;
    config.budget_ratio = 0.5;
    dtr::sim::SimResult r = dtr::sim::simulate(program, baseline, config);
    std::printf("%-10s %-6s overhead %.2f, %llu recomputations\n", h.c_str(),
                std::string(dtr::sim::to_string(r.status)).c_str(), r.overhead,
                static_cast<unsigned long long>(r.remats));
  }
  return 0;
}
