// The usage examples at the top of public headers, verbatim, so they keep
// compiling and doing what they say.
#include <gtest/gtest.h>

#include "dtr/core/runtime.h"

namespace {

TEST(HeaderExamplesTest, RuntimeH) {
  dtr::Runtime rt({.budget_bytes = 1000}, dtr::make_heuristic("dtr"));
  const dtr::TensorId w[] = {rt.add_constant(100)};
  const dtr::OutputSpec out[] = {{.bytes = 400}};
  dtr::TensorId y = rt.call("relu", w, out, /*cost_ns=*/10)[0];
  rt.release(y);  // eager policy: evicted at once, still recomputable
  EXPECT_EQ(rt.stats().memory_bytes, 100);  // only the constant stays
}

}  // namespace
