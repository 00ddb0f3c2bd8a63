#pragma once
/// Replays a Program on the core runtime under a budget, with the paper's
/// protocol (docs/simulator.md): an unbounded run gives the baseline peak
/// (constants included) and compute; a run at ratio r gets floor(r * baseline
/// peak) bytes; it ends `ok`, `oom` (nothing evictable) or `thrash` (remat
/// compute exceeded (limit - 1) x baseline compute).
#include <cstdint>
#include <optional>
#include <string>

#include "dtr/core/dealloc_policy.h"
#include "dtr/core/heuristic.h"
#include "dtr/core/observer.h"
#include "dtr/core/staging.h"
#include "dtr/sim/allocator/allocator_model.h"
#include "dtr/trace/program.h"

namespace dtr::sim {

struct Baseline {
  std::int64_t peak_bytes = 0;  ///< includes constants
  std::int64_t compute_ns = 0;
  std::int64_t constant_bytes = 0;
  std::int64_t bottleneck_bytes = 0;  ///< largest single-op working set
};

struct SimConfig {
  /// A core heuristic, or "auto" (auto_choice.h).
  std::string heuristic = "dtr";
  DeallocPolicy policy = DeallocPolicy::kEager;
  /// Exactly one of the two budgets is used; the ratio wins if both are set.
  std::optional<double> budget_ratio;
  std::optional<std::int64_t> budget_bytes;
  double thrash_limit = 2.0;  ///< overhead at which a run gives up
  bool sample_sqrt = false;
  bool ignore_small = false;
  std::uint64_t seed = 0;
  /// Index or scan for the victim search (the same victims; kCheck runs
  /// both and throws dtr::InternalError if they differ).
  ChoiceMode choice = ChoiceMode::kIndex;
  /// Sees the budgeted run (not the baseline), e.g. a profile; not owned.
  RuntimeObserver* observer = nullptr;
  /// Staging (dtr/core/staging.h). kRecord: each step's evictions are
  /// recorded (SimResult::captured), every step searches; kLoop: each step
  /// replays the previous step's evictions while it matches (a training
  /// loop). With `plans` (not owned; e.g. a kRecord run's `captured`), step
  /// k follows plans[k] instead, whatever the mode.
  /// Where storages are placed (allocator_model.h); kPerfect runs no
  /// model. kBestFit and kCaching measure the reserved bytes, with the
  /// budget as the capacity of a real allocator, and change no decision;
  /// kArena places storages in a region of the budget and evicts windows.
  AllocatorKind allocator = AllocatorKind::kPerfect;
  /// Check the allocator model's invariants after every change (tests).
  bool check_allocator = false;
  enum class StageMode { kOff, kRecord, kLoop };
  StageMode stage = StageMode::kOff;
  const std::vector<StepPlan>* plans = nullptr;
};

enum class SimStatus { kOk, kOom, kThrash };
std::string_view to_string(SimStatus status);

struct SimResult {
  SimStatus status = SimStatus::kOk;
  std::string heuristic;
  /// For "auto": the fixed heuristic whose run this is (empty if all failed).
  std::string chosen;
  DeallocPolicy policy = DeallocPolicy::kEager;
  double budget_ratio = 0;  ///< budget / baseline peak
  std::int64_t budget_bytes = 0;
  Baseline baseline;
  std::int64_t model_compute_ns = 0;
  std::int64_t remat_compute_ns = 0;
  double overhead = 0;          ///< (model + remat) / model
  std::int64_t peak_bytes = 0;  ///< live: resident bytes
  AllocatorKind allocator = AllocatorKind::kPerfect;
  /// Peak bytes the allocator model held (segments, heap extent); equals
  /// peak_bytes under kPerfect.
  std::int64_t reserved_peak_bytes = 0;
  /// 1 - live / reserved at the reserved peak: the share of the reserved
  /// memory that held no live storage then (0 under kPerfect).
  double fragmentation = 0;
  /// Requests an allocator with exactly the budget could not have placed
  /// (live-budget DTR would have run out of memory there), and the clock
  /// of the first (-1: none).
  std::uint64_t allocator_ooms = 0;
  std::int64_t first_allocator_oom_ns = -1;
  std::uint64_t evictions = 0;  ///< chosen by the heuristic
  std::uint64_t eager_evictions = 0;
  std::uint64_t banishments = 0;
  std::uint64_t remats = 0;  ///< operator replays
  /// Storages freed for good as dead (Program::forgets_dead).
  std::uint64_t forgotten_storages = 0;
  std::uint64_t metadata_accesses = 0;
  std::uint64_t eviction_searches = 0;  ///< calls into Heuristic::choose
  StagingStats staging;                 ///< with SimConfig::stage or plans
  std::vector<StepPlan> captured;       ///< each step's record, ditto
  std::int64_t sim_wall_ns = 0;
  std::int64_t choose_wall_ns = 0;  ///< of sim_wall_ns, choosing victims
  std::int64_t final_clock_ns = 0;  ///< the runtime's clock at the end
  std::size_t trace_ops = 0;
  std::string message;  ///< why a run failed
};

/// The unbounded run; throws dtr::Error if the program is inconsistent.
Baseline compute_baseline(const trace::Program& program);

/// One budgeted run. Throws InvalidArgument for a bad configuration;
/// running out of memory or thrashing are results, not exceptions.
SimResult simulate(const trace::Program& program, const Baseline& baseline,
                   const SimConfig& config);

/// floor(ratio * peak) computed as the reference does (in double). Throws
/// dtr::InvalidArgument if `ratio` is not a positive finite number or the
/// budget would not fit in an int64 (no ratio is read as "unlimited").
std::int64_t budget_for_ratio(double ratio, std::int64_t peak_bytes);

}  // namespace dtr::sim
