// The kernel's added cost per operator: the same small op on plain tensors
// and on checkpointed tensors (unlimited budget, so nothing is evicted), in
// one run, so the difference is measured side by side. Each iteration also
// drops the result, as a program does, so the release path is counted.
//
// The heuristic is fixed (`dtr`), as it is for every step of a known shape
// under `auto` but for one hash update per call: this bench has no step
// boundaries, so under `auto` all of it would be one first step, which is
// written down for the simulator (Note [Written steps]) and costs more.
// BM_CheckpointedWrittenStep measures that case.
//
//   build/bench/dtr_kernel_bench --benchmark_min_time=0.5
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include "dtr/torch/dtr_torch.h"

namespace {

enum class Op { kAdd, kRelu, kMul, kMm };

at::Tensor apply(Op op, const at::Tensor& a, const at::Tensor& b) {
  switch (op) {
    case Op::kAdd:
      return a + b;
    case Op::kRelu:
      return at::relu(a);
    case Op::kMul:
      return a * b;
    case Op::kMm:
      return at::mm(a, b);
  }
  return {};
}

void run(benchmark::State& state, Op op, bool checkpointed,
         const char* heuristic = "dtr") {
  at::set_num_threads(1);
  dtr::pt::set_heuristic(heuristic);
  const std::int64_t side = state.range(0);
  at::Tensor a = at::randn({side, side});
  at::Tensor b = at::randn({side, side});
  if (checkpointed) {
    a = dtr::pt::checkpoint(a);
    b = dtr::pt::checkpoint(b);
  }
  for (auto _ : state) {
    at::Tensor c = apply(op, a, b);
    c10::TensorImpl* impl = c.unsafeGetTensorImpl();
    benchmark::DoNotOptimize(impl);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Plain(benchmark::State& state, Op op) {
  run(state, op, false);
}
void BM_Checkpointed(benchmark::State& state, Op op) {
  run(state, op, true);
}
// Switching to `auto` starts writing the step (the first step is always
// written); it stays written for kMaxWrittenCalls calls, more than the
// fixed iteration count below.
void BM_CheckpointedWrittenStep(benchmark::State& state, Op op) {
  run(state, op, true, "auto");
}

// 8x8 = 64 elements: the op itself costs ~1 us, so the kernel's bookkeeping
// dominates; 64x64 shows how the share falls as ops grow.
#define DTR_KERNEL_BENCH(name, op)                        \
  BENCHMARK_CAPTURE(BM_Plain, name, op)->Arg(8)->Arg(64); \
  BENCHMARK_CAPTURE(BM_Checkpointed, name, op)->Arg(8)->Arg(64)

DTR_KERNEL_BENCH(add, Op::kAdd);
DTR_KERNEL_BENCH(relu, Op::kRelu);
DTR_KERNEL_BENCH(mul, Op::kMul);
DTR_KERNEL_BENCH(mm, Op::kMm);
BENCHMARK_CAPTURE(BM_CheckpointedWrittenStep, add, Op::kAdd)
    ->Arg(8)
    ->Iterations(100000);

}  // namespace
