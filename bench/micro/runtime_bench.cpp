// The runtime's own costs: recording an op, and one eviction search per
// heuristic as the pool grows.
#include <benchmark/benchmark.h>

#include "bench_programs.h"
#include "dtr/core/runtime.h"

namespace dtr {
namespace {

// Recording a chain with eager release: the per-op bookkeeping cost when
// nothing is ever evicted by the heuristic.
void BM_RecordChainUnbounded(benchmark::State& state) {
  for (auto _ : state) {
    Runtime rt({}, make_heuristic("dtr-eq"));
    bench::record_chain(rt, 10000);
    auto clock = rt.stats().clock_ns;
    benchmark::DoNotOptimize(clock);
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_RecordChainUnbounded)->Unit(benchmark::kMillisecond);

// Pool of N independent resident values; each new op must evict one: the
// cost of a heuristic's search as a function of the pool size.
void BM_EvictionSearch(benchmark::State& state, const char* heuristic) {
  const int pool = static_cast<int>(state.range(0));
  Runtime rt({.budget_bytes = bench::pool_budget(pool)},
             make_heuristic(heuristic));
  const TensorId x = bench::fill_pool(rt, pool);
  for (auto _ : state) {
    TensorId y = bench::call_evicting_one(rt, x);
    benchmark::DoNotOptimize(y);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_EvictionSearch, dtr, "dtr")->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearch, dtr_eq, "dtr-eq")->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearch, dtr_local, "dtr-local")->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearch, lru, "lru")->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearch, size, "size")->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearch, msps, "msps")->Range(64, 4096);

}  // namespace
}  // namespace dtr
