#include "dtr/sim/simulator.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"
#include "dtr/sim/allocator/allocator_tracker.h"
#include "dtr/sim/allocator/arena.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/sim/dead_values.h"

namespace dtr::sim {

std::string_view to_string(SimStatus status) {
  switch (status) {
    case SimStatus::kOk:
      return "ok";
    case SimStatus::kOom:
      return "oom";
    case SimStatus::kThrash:
      return "thrash";
  }
  return "?";
}

std::int64_t budget_for_ratio(double ratio, std::int64_t peak_bytes) {
  DTR_CHECK(ratio > 0 && std::isfinite(ratio),
            "[sim] budget ratio must be a positive finite number, got ", ratio);
  double bytes = std::floor(ratio * static_cast<double>(peak_bytes));
  // 2^63 is exact in a double; every double below it converts to int64
  // exactly. Converting anything larger would be undefined behaviour.
  constexpr double kLimit = 9223372036854775808.0;
  DTR_CHECK(bytes < kLimit, "[sim] budget ratio ", ratio,
            " times the baseline peak of ", peak_bytes,
            " bytes exceeds the largest budget, ",
            std::numeric_limits<std::int64_t>::max(), " bytes");
  return static_cast<std::int64_t>(bytes);
}

namespace {

// UNPIN ends a hold (docs/trace-format.md). A constant, or a value an
// input of which was freed for good, stays pinned: nothing can recompute
// it (the runtime that recorded the trace frees it at its last release;
// here it stays resident until the end, an over-estimate).
void unpin_held(Runtime& rt, TensorId t) {
  const Graph& g = rt.graph();
  const StorageId s = g.tensor(t).storage;
  if (g.storage(s).constant) return;
  bool parent_freed = false;
  g.for_each_parent_storage(s, [&](StorageId p) {
    if (p != s && g.storage(p).banished) parent_freed = true;
  });
  if (!parent_freed) rt.unpin(t);
}

// Replays every step of `program` on `rt`; `forget`: forget dead values
// as the runtime that recorded it did (Note [Forgetting dead values]).
void replay(const trace::Program& program, Runtime& rt, bool forget) {
  rt.reserve(program.ops.size(), program.value_count);
  std::vector<TensorId> tensor_of(program.value_count, kNoId);
  std::optional<DeadValues> dead;
  if (forget) dead.emplace(program, rt, tensor_of);
  std::vector<TensorId> inputs;
  std::size_t next_start = 0;  // into program.step_starts
  std::size_t next_cut = 0;    // into program.lineage_cuts
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const trace::Step& step = program.steps[i];
    if (next_start < program.step_starts.size() &&
        program.step_starts[next_start] == i) {
      rt.begin_step();
      ++next_start;
    }
    if (next_cut < program.lineage_cuts.size() &&
        program.lineage_cuts[next_cut] == i) {
      if (dead) dead->on_lineage_cut();
      ++next_cut;
    }
    switch (step.kind) {
      case trace::StepKind::kCompute: {
        const trace::ProgramOp& op = program.ops[step.index];
        if (op.constant) {
          tensor_of[op.first_output] = rt.add_constant(op.outputs[0].bytes);
        } else {
          inputs.clear();
          for (trace::ValueId v : op.inputs) inputs.push_back(tensor_of[v]);
          auto out = rt.call(op.name, inputs, op.outputs, op.cost_ns,
                             op.workspace_bytes);
          for (std::size_t k = 0; k < out.size(); ++k) {
            tensor_of[op.first_output + k] = out[k];
          }
        }
        if (dead) dead->on_compute(step.index);
        break;
      }
      case trace::StepKind::kRetain:
        rt.retain(tensor_of[step.index]);
        if (dead) dead->on_retain(step.index);
        break;
      case trace::StepKind::kRelease:
        rt.release(tensor_of[step.index]);
        if (dead) dead->on_release(step.index);
        break;
      case trace::StepKind::kPin:
        rt.pin(tensor_of[step.index]);
        if (dead) dead->on_pin(step.index);
        break;
      case trace::StepKind::kUnpin:
        unpin_held(rt, tensor_of[step.index]);
        break;
    }
  }
}

// The reserved figures of a run; with no model, those of a perfect one.
void note_allocator(const AllocatorTracker* tracker, SimResult& r) {
  if (tracker == nullptr) {
    r.reserved_peak_bytes = r.peak_bytes;
    return;
  }
  const AllocatorStats& a = tracker->stats();
  r.reserved_peak_bytes = a.reserved_peak_bytes;
  r.fragmentation = a.reserved_peak_bytes > 0
                        ? 1.0 - double(a.live_at_reserved_peak) /
                                    double(a.reserved_peak_bytes)
                        : 0.0;
  r.allocator_ooms = a.failures;
  r.first_allocator_oom_ns = a.first_failure_clock_ns;
}

// The arena reserves the budget throughout; its fragmentation is the share
// of it that the live peak left unused.
void note_arena(const Arena& arena, SimResult& r) {
  r.reserved_peak_bytes = arena.reserved_peak_bytes();
  r.fragmentation =
      r.reserved_peak_bytes > 0
          ? 1.0 - double(r.peak_bytes) / double(r.reserved_peak_bytes)
          : 0.0;
  r.allocator_ooms = arena.failures();
}

}  // namespace

Baseline compute_baseline(const trace::Program& program) {
  // The reference measures the baseline with its banishing runtime, which
  // also frees constants once the program drops them; banish with an
  // unlimited budget frees every value at its last release, likewise.
  RuntimeOptions options;
  options.policy = DeallocPolicy::kBanish;
  Runtime rt(options, make_heuristic("lru"));
  replay(program, rt, /*forget=*/false);
  const RuntimeStats& s = rt.stats();
  DTR_ASSERT(s.remat_compute_ns == 0, "the unbounded run rematerialized");
  return Baseline{s.peak_bytes, s.model_compute_ns, s.constant_bytes,
                  s.bottleneck_bytes};
}

namespace {

// The budget of a run: a ratio of the baseline's peak, or bytes.
std::int64_t budget_of(const SimConfig& config, const Baseline& baseline) {
  if (config.budget_ratio) {
    return budget_for_ratio(*config.budget_ratio, baseline.peak_bytes);
  }
  DTR_CHECK(config.budget_bytes.has_value(),
            "[sim] give a budget ratio or a budget in bytes");
  DTR_CHECK(*config.budget_bytes >= 0, "[sim] negative budget ",
            *config.budget_bytes);
  return *config.budget_bytes;
}

RuntimeOptions runtime_options(const trace::Program& program,
                               const Baseline& baseline,
                               const SimConfig& config,
                               std::int64_t budget_bytes) {
  RuntimeOptions options;
  options.budget_bytes = budget_bytes;
  options.policy = config.policy;
  options.sample_sqrt = config.sample_sqrt;
  options.ignore_small = config.ignore_small;
  options.seed = config.seed;
  // Recorded by the LibTorch layer, whose calls went through begin_call.
  options.retry_inputs_in_order = program.forgets_dead;
  double limit = double(baseline.compute_ns) * (config.thrash_limit - 1.0);
  options.remat_limit_ns =
      std::isfinite(limit) ? static_cast<std::int64_t>(std::floor(limit)) : -1;
  return options;
}

// The runtime's figures of a finished (or stopped) run.
void note_run(const Runtime& rt, SimResult& r) {
  const RuntimeStats& s = rt.stats();
  r.model_compute_ns = s.model_compute_ns;
  r.remat_compute_ns = s.remat_compute_ns;
  r.overhead = s.model_compute_ns > 0
                   ? double(s.model_compute_ns + s.remat_compute_ns) /
                         double(s.model_compute_ns)
                   : 1.0;
  r.peak_bytes = s.peak_bytes;
  r.evictions = s.evictions;
  r.eager_evictions = s.eager_evictions;
  r.banishments = s.banishments;
  r.remats = s.remat_ops;
  r.forgotten_storages = s.forgotten_storages;
  r.metadata_accesses = rt.heuristic().accesses();
  r.choose_wall_ns = s.choose_wall_ns;
  r.final_clock_ns = s.clock_ns;
  r.eviction_searches = s.eviction_searches;
  if (const Staging* staging = rt.staging()) {
    r.staging = staging->stats();
    r.captured = staging->captured();
  }
}

}  // namespace

SimResult simulate(const trace::Program& program, const Baseline& baseline,
                   const SimConfig& config) {
  if (config.heuristic == kAutoHeuristic) {
    return simulate_auto(program, baseline, config);
  }
  SimResult r;
  r.heuristic = config.heuristic;
  r.policy = config.policy;
  r.allocator = config.allocator;
  r.baseline = baseline;
  r.trace_ops = program.trace_ops();
  r.budget_bytes = budget_of(config, baseline);
  r.budget_ratio = baseline.peak_bytes > 0
                       ? double(r.budget_bytes) / double(baseline.peak_bytes)
                       : 0.0;
  DTR_CHECK(config.thrash_limit >= 1.0, "[sim] thrash limit must be >= 1, got ",
            config.thrash_limit);

  const RuntimeOptions options =
      runtime_options(program, baseline, config, r.budget_bytes);
  auto heuristic = make_heuristic(config.heuristic, config.seed);
  heuristic->set_choice_mode(config.choice);
  Runtime rt(options, std::move(heuristic));
  std::optional<AllocatorTracker> tracker;
  std::optional<Arena> arena;
  rt.set_observer(config.observer);
  if (config.allocator == AllocatorKind::kArena) {
    arena.emplace(r.budget_bytes, config.check_allocator);
    rt.set_placement(&*arena);
  } else if (config.allocator != AllocatorKind::kPerfect) {
    tracker.emplace(make_allocator_model(config.allocator, r.budget_bytes),
                    config.observer, config.check_allocator);
    rt.set_observer(&*tracker);
  }
  if (config.stage != SimConfig::StageMode::kOff || config.plans) {
    rt.enable_staging();
    rt.staging()->keep_records(true);
    rt.staging()->replay_previous(config.stage == SimConfig::StageMode::kLoop);
    if (config.plans) rt.staging()->load(*config.plans);
  }

  auto start = std::chrono::steady_clock::now();
  try {
    replay(program, rt, program.forgets_dead);
  } catch (const OutOfMemory& e) {
    r.status = SimStatus::kOom;
    r.message = e.what();
  } catch (const RematLimitExceeded& e) {
    r.status = SimStatus::kThrash;
    r.message = e.what();
  }
  rt.begin_step();  // closes the last step, for the staging figures
  r.sim_wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  note_run(rt, r);
  if (arena) {
    note_arena(*arena, r);
  } else {
    note_allocator(tracker ? &*tracker : nullptr, r);
  }
  return r;
}

}  // namespace dtr::sim
