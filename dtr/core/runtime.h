#pragma once
/// The DTR runtime: records every operator call, keeps resident storages
/// within a byte budget by evicting the lowest-scoring evictable storage
/// before each allocation, and recomputes evicted values on demand.
///
///   dtr::Runtime rt({.budget_bytes = 1000}, dtr::make_heuristic("dtr"));
///   const dtr::TensorId w[] = {rt.add_constant(100)};
///   const dtr::OutputSpec out[] = {{.bytes = 400}};
///   dtr::TensorId y = rt.call("relu", w, out, /*cost_ns=*/10)[0];
///   rt.release(y);   // eager policy: evicted at once, still recomputable
/// (compiled by tests/core/header_examples_test.cpp)
///
/// Rematerialization runs on an explicit work stack (no C++ recursion), so
/// chains of millions of operators are fine. All methods are O(inputs +
/// outputs) plus the eviction search; none is thread-safe.
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/core/dealloc_policy.h"
#include "dtr/core/eviction_pool.h"
#include "dtr/core/executor.h"
#include "dtr/core/graph.h"
#include "dtr/core/heuristic.h"
#include "dtr/core/limits.h"
#include "dtr/core/observer.h"
#include "dtr/core/placement.h"
#include "dtr/core/staging.h"
#include "dtr/core/stats.h"

namespace dtr {

/// The default budget: every storage dtr can count fits (limits.h).
inline constexpr std::int64_t kUnlimitedBytes = kMaxTotalBytes;

struct RuntimeOptions {
  std::int64_t budget_bytes = kUnlimitedBytes;
  DeallocPolicy policy = DeallocPolicy::kEager;
  /// Throw RematLimitExceeded once remat compute exceeds this; <0: no limit.
  std::int64_t remat_limit_ns = -1;
  /// Prototype optimization: examine ~sqrt(n) candidates per eviction.
  bool sample_sqrt = false;
  /// Prototype optimization: skip candidates under 1% of the mean size.
  bool ignore_small = false;
  /// Free a constant once the program drops its last handle (its children
  /// are pinned, since nothing can recompute it any more). Off by default:
  /// the paper's simulator keeps constants for the whole run.
  bool free_dead_constants = false;
  /// A call whose inputs run out of memory in a frame's order (defined
  /// ones locked first) retries them in argument order, as begin_call
  /// does (Note [Inputs in argument order]). Off by default: the paper's
  /// simulator fails there; the simulator turns it on for traces the
  /// LibTorch layer recorded, whose calls went through begin_call.
  bool retry_inputs_in_order = false;
  std::uint64_t seed = 0;
};

/// One output of an operator call.
struct OutputSpec {
  std::int64_t bytes = 0;  ///< ignored (0) for aliases
  int alias_of = -1;       ///< index into the call's inputs, or -1
};

class Runtime {
 public:
  /// `executor` (optional, not owned) replays ops and frees buffers for a
  /// real framework; the simulator passes none.
  Runtime(RuntimeOptions options, std::unique_ptr<Heuristic> heuristic,
          Executor* executor = nullptr);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Adds a resident constant of `bytes` (weights, inputs): pinned, one
  /// external reference. May evict to make room; throws OutOfMemory.
  TensorId add_constant(std::int64_t bytes, std::string_view name = "constant");

  /// Records and performs an operator call: makes its inputs resident
  /// (recomputing evicted ones), evicts until the outputs and
  /// `workspace_bytes` of scratch fit (Note [Workspace]), then charges
  /// `cost_ns`. Each output starts with one external reference. Throws
  /// OutOfMemory or RematLimitExceeded, RematerializationError if the
  /// Executor fails to replay an op, or OverflowError if the live storages'
  /// bytes or the recorded costs would pass kMaxTotalBytes /
  /// kMaxTotalCostNs; after any of these nothing of this call remains and
  /// the runtime can be used again. An OutOfMemory met while rematerializing
  /// names the tensor being recomputed. The returned ids (the op's
  /// outputs, consecutive) stay valid until forget() (see there).
  std::span<const TensorId> call(std::string_view name,
                                 std::span<const TensorId> inputs,
                                 std::span<const OutputSpec> outputs,
                                 std::int64_t cost_ns,
                                 std::int64_t workspace_bytes = 0);

  /// Two-phase form for frameworks that learn output sizes only by running
  /// the op: begin_call makes `inputs` resident and locks them; the caller
  /// may make_room() for allocations it is about to do, runs the op, then
  /// end_call records the outputs (or abort_call unlocks).
  /// end_call returns the outputs' ids as call() does; the span points into
  /// the graph, so copy it before the next call or constant. The caller
  /// made room for the op's scratch while it ran; `workspace_bytes` says
  /// how much a replay must make room for (Note [Workspace]).
  void begin_call(std::span<const TensorId> inputs);
  std::span<const TensorId> end_call(std::string_view name,
                                     std::span<const TensorId> inputs,
                                     std::span<const OutputSpec> outputs,
                                     std::int64_t cost_ns,
                                     std::int64_t workspace_bytes = 0);
  void abort_call(std::span<const TensorId> inputs);
  /// Evicts (the heuristic's choices) until `bytes` more fit in the budget:
  /// the one place the budget is enforced, also used by call() and every
  /// rematerialization. Throws OutOfMemory, or InvalidArgument if bytes < 0.
  void make_room(std::int64_t bytes);

  /// Makes `t` defined again (recomputing as needed). Also a released `t`
  /// under the banish policy: it is not banished before this returns (it
  /// may be by a later operation, once nothing needs it). Throws like
  /// call(); after a throw no lock is held and `t` may still be undefined.
  void materialize(TensorId t);
  /// Materializes `t` and makes its storage unevictable for good.
  void pin(TensorId t);
  /// Makes a pinned storage evictable again. Throws InvalidArgument for a
  /// storage that cannot be recomputed (a constant, or one whose op reads a
  /// storage freed for good), which stays pinned.
  void unpin(TensorId t);
  /// Adds / drops one external reference (a program handle) to `t`. Under
  /// the eager policy a storage whose last handle goes while it is locked
  /// is evicted when its last lock is released.
  void retain(TensorId t);
  void release(TensorId t);
  /// Promises that released tensor `t` (ext_refs == 0) will never again be
  /// a call's input, be materialized, retained or pinned, nor be needed to
  /// replay an op, so its lineage can be pruned (Note [Forgetting]):
  ///  - once every tensor of a storage is forgotten, the storage is freed for
  ///    good (resident bytes released, not counted as an eviction, never
  ///    recomputed; resident children are pinned, as banishing does). A
  ///    storage with a live alias stays, and stays recomputable.
  ///  - once every output of an op is forgotten and no live op reads them,
  ///    the op, its outputs and their storages (when none of their tensors
  ///    is left) are recycled, and so, in turn, are the ops that this makes
  ///    unreachable. A forgotten id is reused only after that, never while a
  ///    replay of its op could still write it.
  /// O(tensors freed + edges removed), amortized. Throws InvalidArgument if
  /// `t` is unknown or already forgotten, still has external references, is
  /// locked by a pending begin_call, or if called while an op is replayed.
  void forget(TensorId t);
  /// Evicts every evictable storage now (for tests and debugging).
  void evict_all();
  /// Staging (dtr/core/staging.h, Note [Staging]): from now on each step's
  /// evictions are recorded, and a step that repeats the previous one
  /// evicts what that one did instead of searching. Idempotent.
  void enable_staging();
  /// Stops staging and drops its plans and figures.
  void disable_staging() { staging_.reset(); }
  /// Null unless enable_staging() was called.
  Staging* staging() { return staging_.get(); }
  const Staging* staging() const { return staging_.get(); }
  /// Marks a step boundary for staging (a no-op without it). Two calls with
  /// no operator call in between are one boundary.
  void begin_step();
  /// Restarts peak tracking from the current memory use.
  void reset_peak() { stats_.peak_bytes = stats_.memory_bytes; }

  /// Pre-sizes the graph for about `ops` ops and `tensors` tensors.
  void reserve(std::size_t ops, std::size_t tensors) {
    graph_.reserve(ops, tensors);
  }
  /// Changes the budget; takes effect at the next allocation.
  void set_budget(std::int64_t budget_bytes) {
    options_.budget_bytes = budget_bytes;
  }
  std::int64_t budget_bytes() const { return options_.budget_bytes; }
  /// Changes RuntimeOptions::remat_limit_ns; checked at the next replay.
  void set_remat_limit(std::int64_t limit_ns) {
    options_.remat_limit_ns = limit_ns;
  }
  /// Sets the profiling hook (observer.h; not owned, nullptr: none). Set it
  /// between calls, not from inside one, or its spans will not balance.
  void set_observer(RuntimeObserver* observer) { observer_ = observer; }
  RuntimeObserver* observer() const { return observer_; }
  /// Places storages in an arena (placement.h; not owned, nullptr: none,
  /// the budget alone decides). Set it before the first call.
  void set_placement(Placement* placement) { placement_ = placement; }
  const RuntimeOptions& options() const { return options_; }
  const Graph& graph() const { return graph_; }
  const RuntimeStats& stats() const { return stats_; }
  const Heuristic& heuristic() const { return *heuristic_; }
  /// Replaces the heuristic between calls (not while an op is replayed) and
  /// rebuilds its state from the graph as it is now (Note [Switching
  /// heuristics], runtime_set_heuristic.cpp). O(graph size). Throws
  /// InvalidArgument for a null heuristic or a call during a replay.
  void set_heuristic(std::unique_ptr<Heuristic> heuristic);
  bool is_defined(TensorId t) const;
  /// The heuristic's current score of resident storage `s` (lower is
  /// evicted first); for introspection and tests.
  double score(StorageId s);
  /// Bytes of resident storages in the eviction pool.
  std::int64_t evictable_bytes() const;
  /// Checks every bookkeeping invariant; throws InternalError on a breach.
  /// O(graph size): for tests and debugging.
  void check_invariants() const;

 private:
  struct Frame;
  void check_edges() const;
  void check_tensor(TensorId t, const char* what) const;
  void touch_inputs(const Op& op);
  void run_frames(TensorId t, bool remat);
  void run_in_argument_order(OpId op);  // Note [Inputs in argument order]
  void lock_in_argument_order(std::span<const TensorId> inputs);
  void unlock_inputs(std::span<const TensorId> inputs);
  void push_frame(TensorId t, bool remat);
  void finish_frame();
  void unwind_frames(std::size_t depth);
  std::exception_ptr with_context(std::exception_ptr error,
                                  std::size_t depth) const;
  std::string remat_context(std::size_t depth) const;
  void replay(OpId op_id);
  void compute(TensorId t, bool remat);
  bool fits(std::int64_t bytes) const;
  void evict(StorageId s, bool eager,
             double score = std::numeric_limits<double>::quiet_NaN());
  StorageId choose_victim(std::int64_t min_bytes);
  void note_fresh_outputs(const Op& op);
  void note_memory() {
    if (observer_)
      observer_->on_memory_changed(stats_.memory_bytes, stats_.clock_ns);
  }
  void evict_planned(std::int64_t bytes);
  bool room_for(std::int64_t bytes) const;
  bool evict_window(std::int64_t bytes);
  void pool_insert(StorageId s);
  void touch(StorageId s);  // last access := now
  void lock(StorageId s);
  void unlock(StorageId s);
  void try_banish(StorageId s);
  bool needed_by_frames(StorageId s) const;
  void drop_banished_outputs(const Op& op);
  void free_buffer(StorageId s);
  void pin_children(StorageId s);
  void drop_forgotten(StorageId s);
  void collect(OpId op);
  bool collectable(OpId op) const;
  void recycle(OpId op);
  void discard_call(OpId op);
  std::int64_t check_call(std::string_view name,
                          std::span<const TensorId> inputs,
                          std::span<const OutputSpec> outputs,
                          std::int64_t cost_ns, std::int64_t workspace_bytes);
  OpId record_call(std::string_view name, std::span<const TensorId> inputs,
                   std::span<const OutputSpec> outputs, std::int64_t cost_ns,
                   bool constant, std::int64_t workspace_bytes = 0);

  RuntimeOptions options_;
  std::unique_ptr<Heuristic> heuristic_;
  Executor* executor_;
  RuntimeObserver* observer_ = nullptr;
  Placement* placement_ = nullptr;
  Graph graph_;
  EvictionPool pool_;
  RuntimeStats stats_;
  std::mt19937_64 rng_;
  std::vector<Frame> frames_;
  std::vector<TensorId> arena_;  // parents of the frames, see Frame
  std::vector<StorageId> scratch_;
  std::vector<StorageId> fresh_;          // compute(): outputs made resident
  std::vector<StorageId> window_;         // evict_window's victims
  std::vector<OpId> dead_ops_;            // collect's work list
  std::int64_t total_storage_bytes_ = 0;  // live storages; for the mean size
  std::int64_t total_cost_ns_ = 0;        // recorded live ops (a bound)
  bool busy_ = false;                     // guards against re-entry
  bool inputs_ready_ = false;             // call(): its frame's inputs held
  std::unique_ptr<Staging> staging_;      // see enable_staging()
  std::vector<StorageId> planned_;        // evict_planned's victims
};

}  // namespace dtr
