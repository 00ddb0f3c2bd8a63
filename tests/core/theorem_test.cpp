// The paper's Theorem 3.1, checked empirically: an N-layer linear network,
// forward then backward, unit sizes and costs, trained under a budget of
// 2 ceil(sqrt(N)) units (plus the always-resident input) performs O(N)
// operations. We assert at most kC * N operations for N up to 10,000.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "dtr/core/runtime.h"

namespace dtr {
namespace {

// Forward: t_i = f_i(t_{i-1}). Backward: g_N = f'_N(t_{N-1}),
// g_i = f'_i(t_{i-1}, g_{i+1}), g_1 = f'_1(g_2); each value is released by
// the program once nothing later reads it. Returns operations performed.
std::uint64_t train_chain(int n, const std::string& heuristic,
                          std::int64_t budget_units) {
  Runtime rt({.budget_bytes = budget_units + 1}, make_heuristic(heuristic));
  auto unit = [&](const char* name, std::vector<TensorId> in) {
    OutputSpec out{1, -1};
    return rt.call(name, in, {&out, 1}, 1)[0];
  };
  std::vector<TensorId> t(n + 1);
  t[0] = rt.add_constant(1);
  for (int i = 1; i <= n; ++i) t[i] = unit("f", {t[i - 1]});
  rt.release(t[n]);  // the loss reads t_N only through g_N's input
  TensorId g = unit("df", {t[n - 1]});
  for (int i = n - 1; i >= 2; --i) {
    TensorId next = unit("df", {t[i - 1], g});
    rt.release(g);
    rt.release(t[i]);
    g = next;
  }
  TensorId g1 = unit("df", {g});
  rt.release(g);
  rt.release(t[1]);
  rt.pin(g1);
  return rt.stats().ops + rt.stats().remat_ops;
}

constexpr double kC = 4.0;

TEST(TheoremTest, LinearChainTrainsInLinearOperationsOnSqrtBudget) {
  for (int n : {100, 1000, 10000}) {
    std::int64_t budget =
        2 * static_cast<std::int64_t>(std::ceil(std::sqrt(n)));
    for (const char* h : {"dtr", "dtr-eq"}) {
      std::uint64_t ops = train_chain(n, h, budget);
      std::printf("[theorem] %s N=%d budget=%lld ops=%llu ops/N=%.3f\n", h, n,
                  static_cast<long long>(budget),
                  static_cast<unsigned long long>(ops), double(ops) / n);
      SCOPED_TRACE(std::string(h) + " N=" + std::to_string(n));
      // 2N - 1 ops are needed without any rematerialization.
      EXPECT_GE(ops, static_cast<std::uint64_t>(2 * n - 1));
      EXPECT_LE(ops, static_cast<std::uint64_t>(kC * n))
          << "ops/N = " << double(ops) / n;
    }
  }
}

}  // namespace
}  // namespace dtr
