// The runtime's own costs: recording an op, and one eviction search per
// heuristic as the pool grows.
#include <benchmark/benchmark.h>

#include "dtr/core/runtime.h"

namespace dtr {
namespace {

// Recording a chain with eager release: the per-op bookkeeping cost when
// nothing is ever evicted by the heuristic.
void BM_RecordChainUnbounded(benchmark::State& state) {
  for (auto _ : state) {
    Runtime rt({}, make_heuristic("dtr-eq"));
    TensorId t = rt.add_constant(8);
    OutputSpec out{64, -1};
    for (int i = 0; i < 10000; ++i) {
      TensorId next = rt.call("f", std::vector<TensorId>{t}, {&out, 1}, 1)[0];
      if (i) rt.release(t);
      t = next;
    }
    benchmark::DoNotOptimize(rt.stats().clock_ns);
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_RecordChainUnbounded)->Unit(benchmark::kMillisecond);

// Pool of N independent resident values; each new op must evict one: the
// cost of a heuristic's search as a function of the pool size.
void BM_EvictionSearch(benchmark::State& state, const char* heuristic) {
  const int pool = static_cast<int>(state.range(0));
  Runtime rt({.budget_bytes = 8 + 64LL * pool}, make_heuristic(heuristic));
  TensorId x = rt.add_constant(8);
  OutputSpec out{64, -1};
  std::vector<TensorId> live;
  for (int i = 0; i < pool; ++i) {
    live.push_back(
        rt.call("f", std::vector<TensorId>{x}, {&out, 1}, 1 + i % 7)[0]);
  }
  for (auto _ : state) {
    // Each call evicts exactly one storage to make room.
    TensorId t = rt.call("g", std::vector<TensorId>{x}, {&out, 1}, 3)[0];
    benchmark::DoNotOptimize(t);
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
