// Eviction choice time against the number of candidates (10^3 .. 10^5) for
// the scan, the prototype's sqrt(n) sampling and the index, per heuristic
// (docs/benchmarks.md). "random" has no index: it scans in that column too.
#include <benchmark/benchmark.h>

#include "dtr/core/runtime.h"

namespace dtr {
namespace {

enum class Search { kScan, kSqrt, kIndex };

// A pool of n independent resident values of equal size and spread costs;
// each timed call makes room by evicting exactly one of them, so one
// iteration is one eviction (search, eviction and the call's bookkeeping).
void BM_ChoiceTime(benchmark::State& state, const char* heuristic,
                   Search search) {
  const std::int64_t n = state.range(0);
  RuntimeOptions options;
  options.budget_bytes = 8 + 64 * n;
  options.sample_sqrt = search == Search::kSqrt;
  auto h = make_heuristic(heuristic, 1);
  h->set_choice_mode(search == Search::kScan ? ChoiceMode::kScan
                                             : ChoiceMode::kIndex);
  Runtime rt(options, std::move(h));
  TensorId x = rt.add_constant(8);
  OutputSpec out{64, -1};
  std::vector<TensorId> keep;
  keep.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t cost = 1 + (i * 7919) % 1000;
    keep.push_back(rt.call("f", std::vector<TensorId>{x}, {&out, 1}, cost)[0]);
  }
  // One untimed eviction first: it builds the index (and the region caches
  // of dtr and msps), a one-time cost the steady state does not pay.
  rt.call("g", std::vector<TensorId>{x}, {&out, 1}, 3);
  const std::uint64_t before = rt.stats().evictions;
  const std::int64_t choosing_before = rt.stats().choose_wall_ns;
  for (auto _ : state) {
    TensorId t = rt.call("g", std::vector<TensorId>{x}, {&out, 1}, 3)[0];
    benchmark::DoNotOptimize(t);
  }
  state.counters["evictions"] =
      benchmark::Counter(double(rt.stats().evictions - before),
                         benchmark::Counter::kAvgIterations);
  // The timed call also records the op and keeps the index current (an
  // access re-keys its input); this is the choice alone, in microseconds.
  state.counters["choose_us"] = benchmark::Counter(
      double(rt.stats().choose_wall_ns - choosing_before) / 1e3,
      benchmark::Counter::kAvgIterations);
  state.SetItemsProcessed(state.iterations());
}

void choice_args(benchmark::internal::Benchmark* b) {
  b->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
}

#define DTR_CHOICE_BENCH(tag, name)                                   \
  BENCHMARK_CAPTURE(BM_ChoiceTime, tag##_scan, name, Search::kScan)   \
      ->Apply(choice_args);                                           \
  BENCHMARK_CAPTURE(BM_ChoiceTime, tag##_sqrt, name, Search::kSqrt)   \
      ->Apply(choice_args);                                           \
  BENCHMARK_CAPTURE(BM_ChoiceTime, tag##_index, name, Search::kIndex) \
      ->Apply(choice_args)

DTR_CHOICE_BENCH(dtr_eq, "dtr-eq");
DTR_CHOICE_BENCH(dtr_local, "dtr-local");
DTR_CHOICE_BENCH(lru, "lru");
DTR_CHOICE_BENCH(size, "size");
DTR_CHOICE_BENCH(msps, "msps");
DTR_CHOICE_BENCH(dtr, "dtr");

}  // namespace
}  // namespace dtr
