// Simulator throughput (trace operations per second) on the built-in model
// traces, per heuristic, at budget ratio 0.5.
#include <benchmark/benchmark.h>

#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"

namespace dtr::sim {
namespace {

void BM_Simulate(benchmark::State& state, const char* model,
                 const char* heuristic) {
  NamedProgram p = load_program(std::string("model:") + model);
  Baseline b = compute_baseline(p.program);
  SimConfig config;
  config.heuristic = heuristic;
  config.budget_ratio = 0.5;
  for (auto _ : state) {
    SimResult r = simulate(p.program, b, config);
    benchmark::DoNotOptimize(r.overhead);
  }
  state.SetItemsProcessed(state.iterations() * p.program.trace_ops());
}

#define DTR_SIM_BENCH(model)                                       \
  BENCHMARK_CAPTURE(BM_Simulate, model##_dtr, #model, "dtr")       \
      ->Unit(benchmark::kMillisecond);                             \
  BENCHMARK_CAPTURE(BM_Simulate, model##_dtr_eq, #model, "dtr-eq") \
      ->Unit(benchmark::kMillisecond);                             \
  BENCHMARK_CAPTURE(BM_Simulate, model##_lru, #model, "lru")       \
      ->Unit(benchmark::kMillisecond)

DTR_SIM_BENCH(resnet);
DTR_SIM_BENCH(lstm);
DTR_SIM_BENCH(transformer);
DTR_SIM_BENCH(treelstm);

}  // namespace
}  // namespace dtr::sim
