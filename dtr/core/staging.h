#pragma once
/// Staged eviction plans: the runtime records, step by step, which storages
/// each eviction request evicted, and replays those decisions in a later
/// step with no heuristic search while the program repeats itself.
///
///   dtr::Runtime rt({.budget_bytes = b}, dtr::make_heuristic("dtr"));
///   rt.enable_staging();
///   for (int i = 0; i < steps; ++i) { rt.begin_step(); train_step(rt); }
///   rt.begin_step();   // closes the last step (counted in the stats)
///   rt.staging()->stats().staged_steps;   // steps replayed from a plan
///
/// See Note [Staging] in staging.cpp for what is matched and when a step
/// falls back to the heuristic. Not thread-safe, like the runtime.
#include <cstdint>
#include <span>
#include <vector>

#include "dtr/core/graph.h"

namespace dtr {

/// A victim named by position, so that a plan applies to the fresh ids of
/// another step: output `output` of the `call`-th call of this step or of
/// the previous one, or (for older storages) the storage id itself.
struct VictimRef {
  enum class Kind : std::uint8_t { kThisStep, kLastStep, kStorage };
  Kind kind = Kind::kStorage;
  std::uint32_t call = 0;
  std::uint32_t output = 0;
  StorageId storage = kNoId;  ///< kStorage only
  bool operator==(const VictimRef&) const = default;
};

/// One eviction request of a step: made before the `call`-th call of the
/// step was recorded (or while it ran), for `bytes`, and what it evicted.
struct PlannedRoom {
  std::uint32_t call = 0;
  std::int64_t bytes = 0;
  std::vector<VictimRef> victims;
  /// The request ended in OutOfMemory: it evicted all it could (the pool
  /// ran dry) and the caller went on without the room (a frontend's
  /// fallback, e.g. another order of locking a call's inputs).
  bool ran_out = false;
};

/// What one step did: a signature per operator call (name and output
/// sizes, hashed) and its eviction requests in order.
struct StepPlan {
  std::vector<std::uint64_t> calls;
  std::vector<PlannedRoom> rooms;
  bool empty() const { return calls.empty(); }
};

struct StagingStats {
  std::uint64_t steps = 0;              ///< steps closed by begin_step()
  std::uint64_t staged_steps = 0;       ///< replayed from a plan to the end
  std::uint64_t diverged_steps = 0;     ///< had a plan, fell back to the search
  std::uint64_t planned_evictions = 0;  ///< evictions taken from a plan
};

/// The staging state a Runtime keeps (Runtime::enable_staging()).
class Staging {
 public:
  /// Plans to use for the coming steps, in order, instead of the previous
  /// step's record (for the simulator: replay an online run's steps).
  void load(std::vector<StepPlan> plans);
  /// Whether a step without loaded plans follows the previous step's record
  /// (the default) or runs online (only recording: a plan source).
  void replay_previous(bool on) {
    replay_previous_ = on;
    if (!on && queued_.empty()) plan_ = StepPlan{}, staged_ = false;
  }
  /// Keep every closed step's record (captured()); off by default.
  void keep_records(bool keep) { keep_records_ = keep; }
  const std::vector<StepPlan>& captured() const { return captured_; }
  /// The plan the current step follows (empty when it runs online).
  const StepPlan& plan() const { return plan_; }
  const StagingStats& stats() const { return stats_; }
  /// Whether the current step follows a plan and has not diverged.
  bool staged() const { return staged_; }

  // Hooks for the Runtime.
  /// Closes the current step (if it made any call) and starts the next.
  void begin_step();
  /// A call was recorded (op `op`, its outputs created).
  void on_call(const Graph& g, OpId op);
  /// An eviction request for `bytes` that does not fit: records it and
  /// returns the planned victims (resolved to storages) into `out`, empty
  /// when the step runs online.
  void begin_room(std::int64_t bytes, std::vector<StorageId>& out);
  /// A storage the current request evicted, from the plan or chosen.
  void on_victim(StorageId s, bool planned);
  /// The current request ran out of memory (see PlannedRoom::ran_out).
  void on_room_ran_out() { record_.rooms.back().ran_out = true; }
  /// Whether the plan's request matched by the last begin_room() ran out.
  bool planned_room_ran_out() const { return planned_ran_out_; }
  /// The plan no longer matches: the rest of the step runs online.
  void diverge() { staged_ = false; }

 private:
  struct Origin {
    std::uint64_t step = 0;  // 0: before staging began
    std::uint32_t call = 0;
    std::uint32_t output = 0;
  };
  struct CallTable {  // the storages of each call's outputs (kNoId: alias)
    std::vector<std::uint32_t> offsets{0};
    std::vector<StorageId> storages;
    void clear() {
      offsets.assign(1, 0);
      storages.clear();
    }
    std::uint32_t calls() const {
      return static_cast<std::uint32_t>(offsets.size() - 1);
    }
  };
  VictimRef name_victim(StorageId s) const;
  StorageId resolve(const VictimRef& v) const;
  void finish_step();

  StepPlan plan_;
  StepPlan record_;
  std::vector<StepPlan> queued_;  // load(): plans of steps step_ ...
  std::size_t next_queued_ = 0;
  std::vector<StepPlan> captured_;
  bool keep_records_ = false;
  bool replay_previous_ = true;
  bool staged_ = false;
  bool planned_ran_out_ = false;  // of the room begin_room() matched
  std::size_t room_cursor_ = 0;   // next planned room
  std::uint64_t step_ = 1;
  std::vector<Origin> origin_;  // by StorageId
  CallTable this_step_, last_step_;
  StagingStats stats_;
};

}  // namespace dtr
