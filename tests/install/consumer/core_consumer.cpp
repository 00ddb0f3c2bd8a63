// Uses the installed dtr::core, dtr::trace and dtr::models: a chain under a
// budget that forces evictions, a recomputation, and a built-in model trace.
#include <cstdio>
#include <sstream>
#include <vector>

#include "dtr/core/runtime.h"
#include "dtr/models/model_registry.h"
#include "dtr/trace/trace_writer.h"

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "core_consumer: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  // x0 (constant) -> x1 -> ... -> x8, 100 bytes each, 400 bytes of budget:
  // keeping every handle forces evictions, and x1 must then be recomputed.
  dtr::Runtime rt({.budget_bytes = 400}, dtr::make_heuristic("dtr"));
  std::vector<dtr::TensorId> xs{rt.add_constant(100)};
  const dtr::OutputSpec out{.bytes = 100};
  for (int i = 0; i < 8; ++i) {
    xs.push_back(rt.call("f", {&xs.back(), 1}, {&out, 1}, /*cost_ns=*/10)[0]);
  }
  rt.materialize(xs[1]);
  const dtr::RuntimeStats& s = rt.stats();
  if (s.ops < 8) return fail("expected 8 recorded ops");
  if (s.peak_bytes > 400) return fail("peak above the budget");
  if (s.evictions == 0) return fail("expected evictions");
  if (s.remat_ops == 0) return fail("expected a recomputation");

  std::ostringstream trace;
  dtr::trace::TraceWriter writer(trace);
  dtr::models::build_model("chain", {.depth = 4}, writer);
  if (trace.str().empty()) return fail("empty chain trace");

  std::printf("core_consumer: ok (%llu evictions, %llu remat ops)\n",
              static_cast<unsigned long long>(s.evictions),
              static_cast<unsigned long long>(s.remat_ops));
  return 0;
}
