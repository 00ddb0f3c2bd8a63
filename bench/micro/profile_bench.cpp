// What profiling costs the runtime (docs/profiling.md): the benchmarks of
// runtime_bench.cpp with an observer set, either a no-op one (the hooks
// alone) or a ProfileRecorder writing its Chrome trace to /dev/null.
// Without an observer the runtime pays one pointer test per hook and the
// two steady_clock reads around each eviction search (compare
// runtime_bench.cpp's figures with those of a build before the hooks).
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "bench_programs.h"
#include "dtr/core/runtime.h"
#include "dtr/trace/profile_recorder.h"

namespace dtr {
namespace {

enum class Observe { kNone, kNoOp, kRecorder };

struct Observed {
  RuntimeObserver no_op;
  std::unique_ptr<trace::ProfileRecorder> recorder;
  RuntimeObserver* get(Observe how) {
    switch (how) {
      case Observe::kNone:
        return nullptr;
      case Observe::kNoOp:
        return &no_op;
      case Observe::kRecorder:
        recorder = std::make_unique<trace::ProfileRecorder>(
            "/dev/null", trace::ProfileClock::kRuntime, "bench");
        return recorder.get();
    }
    return nullptr;
  }
};

void BM_RecordChainObserved(benchmark::State& state, Observe how) {
  Observed observed;
  RuntimeObserver* observer = observed.get(how);
  for (auto _ : state) {
    Runtime rt({}, make_heuristic("dtr-eq"));
    rt.set_observer(observer);
    bench::record_chain(rt, 10000);
    auto clock = rt.stats().clock_ns;
    benchmark::DoNotOptimize(clock);
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK_CAPTURE(BM_RecordChainObserved, none, Observe::kNone)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecordChainObserved, no_op, Observe::kNoOp)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecordChainObserved, recorder, Observe::kRecorder)
    ->Unit(benchmark::kMillisecond);

// As BM_EvictionSearch: each call evicts one storage from a pool of N.
void BM_EvictionSearchObserved(benchmark::State& state, const char* heuristic,
                               Observe how) {
  const int pool = static_cast<int>(state.range(0));
  Observed observed;
  Runtime rt({.budget_bytes = bench::pool_budget(pool)},
             make_heuristic(heuristic));
  rt.set_observer(observed.get(how));
  const TensorId x = bench::fill_pool(rt, pool);
  for (auto _ : state) {
    TensorId y = bench::call_evicting_one(rt, x);
    benchmark::DoNotOptimize(y);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_EvictionSearchObserved, lru_none, "lru", Observe::kNone)
    ->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearchObserved, lru_recorder, "lru",
                  Observe::kRecorder)
    ->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearchObserved, dtr_none, "dtr", Observe::kNone)
    ->Range(64, 4096);
BENCHMARK_CAPTURE(BM_EvictionSearchObserved, dtr_recorder, "dtr",
                  Observe::kRecorder)
    ->Range(64, 4096);

}  // namespace
}  // namespace dtr
