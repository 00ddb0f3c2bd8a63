#pragma once
/// DTR for LibTorch: run ordinary LibTorch code under a byte budget.
///
///   auto x = dtr::pt::checkpoint(batch);       // wrap the input
///   dtr::pt::Budget guard(64 << 20);          // evict above 64 MiB
///   auto loss = torch::nll_loss(model->forward(x), target);
///   loss.backward();                          // results bitwise identical
///   std::cout << dtr::pt::stats().allocator_peak_bytes;
///
/// Every operator that touches a checkpointed tensor goes through one boxed
/// kernel (kernel.cpp) that materializes the inputs, runs the operator on
/// plain tensors and records how to recompute the outputs. Parameters and
/// their gradients stay plain tensors: memory outside DTR's control unless
/// the budget's scope is BudgetScope::kProcess.
/// One runtime for the process: threads may train concurrently (calls are
/// serialized); their values share one pool and one budget.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "dtr/core/error.h"
#include "dtr/core/limits.h"

namespace dtr::pt {

/// Wraps `t` as a checkpointed tensor (an unevictable, freeable constant).
/// A tensor that is already checkpointed is returned unchanged. If `t`
/// requires grad, the result is in t's autograd graph: gradients flow back
/// to `t` (as plain tensors).
at::Tensor checkpoint(const at::Tensor& t);
/// checkpoint(module), which checkpoints the inputs of every forward()
/// call as Python's dtr.checkpoint(module) does: checkpointed_module.h.
/// The plain tensor behind `t`, rematerialized if needed; `t` if plain.
at::Tensor decheckpoint(const at::Tensor& t);
bool is_checkpoint(const at::Tensor& t);

/// What a budget bounds (docs/torch.md, "What a budget bounds").
enum class BudgetScope {
  /// Storage of checkpointed values (activations and what is computed from
  /// them). Parameters, their gradients (plain tensors), optimizer state
  /// and the tensors passed to checkpoint() are outside it.
  kCheckpointed,
  /// Every byte of CPU tensor memory in the process: DTR evicts so that
  /// everything live, inside DTR or not, stays within the budget.
  kProcess,
};

/// Sets the budget in bytes (the innermost Budget block of this thread's,
/// if any; else the process's base budget); returns the previous one.
/// kUnlimited (or more) disables eviction; negative throws dtr::Error.
std::int64_t set_budget(std::int64_t bytes,
                        BudgetScope scope = BudgetScope::kCheckpointed);
/// The budget in force now.
std::int64_t budget();
BudgetScope budget_scope();
/// "No budget": the runtime's own unlimited (dtr/core/limits.h), also
/// Python's dtr.UNLIMITED.
inline constexpr std::int64_t kUnlimited = kMaxTotalBytes;

/// A budget block: `bytes` for as long as it lives. Blocks on several
/// threads may overlap and end in any order; while any is active the
/// budget is the sum over threads of each thread's innermost block (one
/// pool, shared: Note [Concurrent budgets]), and afterwards the base.
std::uint64_t push_budget(std::int64_t bytes,
                          BudgetScope scope = BudgetScope::kCheckpointed);
void pop_budget(std::uint64_t token);
class Budget {
 public:
  explicit Budget(std::int64_t bytes,
                  BudgetScope scope = BudgetScope::kCheckpointed)
      : token_(push_budget(bytes, scope)) {}
  ~Budget() { pop_budget(token_); }
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

 private:
  std::uint64_t token_;
};

/// Cost model for eviction scores: measured op time (monotonic clock) or a
/// deterministic model (output bytes), which makes runs reproducible.
enum class CostModel { kMeasured, kBytes };
void set_cost_model(CostModel model);

/// Marks the start of a training step (Note [Step boundaries]): the
/// forward() of checkpoint(module) and `dtr train`'s loop call it; call it
/// yourself at the top of a loop that uses neither. Calling it again with
/// no operator call in between is the same boundary. Feeds auto and
/// staging (set_staging).
void begin_step();

/// The eviction heuristic: "auto" (the default; the environment variable
/// DTR_HEURISTIC overrides it) simulates the program's steps under each
/// fixed heuristic and runs the best (docs/planners.md, "auto"); the name
/// of a registered heuristic (dtr/core/heuristic_registry.h: dtr, dtr-eq,
/// dtr-local, msps, lru, size, random, ...) turns auto off.
/// Throws dtr::InvalidArgument naming an unknown heuristic.
void set_heuristic(const std::string& name);
/// "auto" or the fixed heuristic set; Stats::heuristic is the one in force.
std::string heuristic();

struct Stats {
  std::int64_t budget_bytes = 0;
  std::int64_t dtr_bytes = 0;        ///< resident storage under DTR control
  std::int64_t dtr_peak_bytes = 0;   ///< its peak since reset_peak()
  std::int64_t allocator_bytes = 0;  ///< every live CPU allocation
  std::int64_t allocator_peak_bytes = 0;  ///< its peak since reset_peak()
  std::int64_t outside_bytes = 0;         ///< allocator_bytes - dtr_bytes now
  std::int64_t held_bytes = 0;            ///< unevictable: inputs, grads, state
  std::uint64_t ops = 0;                  ///< operator calls through the kernel
  std::uint64_t remat_ops = 0;            ///< replays
  std::uint64_t evictions = 0;            ///< chosen by the heuristic
  std::uint64_t eager_evictions = 0;      ///< last handle dropped
  std::uint64_t lineage_cuts = 0;         ///< see Note [Lineage cut]
  /// In-place writes of checkpointed values into plain tensors with grad
  /// mode on: memory escaping DTR (a warning names each operator once).
  std::uint64_t escapes = 0;
  std::int64_t remat_compute_ns = 0;
  /// Wall time choosing victims and replaying evicted values (the two
  /// costs the DTR paper reports; see RuntimeStats).
  std::int64_t choose_wall_ns = 0;
  std::int64_t replay_wall_ns = 0;
  /// Live records of the runtime's graph: what it remembers of lineage
  /// (Note [Forgetting dead cells]); flat in a steady training loop.
  std::int64_t graph_ops = 0;
  std::int64_t graph_tensors = 0;
  std::int64_t graph_storages = 0;
  /// The heuristic evicting now (auto's current choice when auto is on).
  std::string heuristic;
  bool auto_heuristic = false;          ///< auto is on
  std::uint64_t steps = 0;              ///< begin_step() boundaries so far
  std::uint64_t auto_decisions = 0;     ///< steps auto simulated to choose
  std::int64_t auto_decision_ns = 0;    ///< wall time of those decisions
  std::uint64_t staged_steps = 0;       ///< replayed from a plan to the end
  std::uint64_t diverged_steps = 0;     ///< had a plan, fell back to search
  std::uint64_t eviction_searches = 0;  ///< calls into Heuristic::choose
};
Stats stats();

/// Staging (docs/planners.md, "Staging"): each step replays the previous
/// step's evictions with no heuristic search while the program repeats
/// it, and falls back to the search at the first difference. Returns the
/// previous setting; turning it off drops the plan (the counts in Stats
/// stay).
bool set_staging(bool on);
/// Evicts every evictable value now (tests, debugging); they are
/// recomputed when next needed.
void evict_all();
/// Resets both peaks to the current values.
void reset_peak();
std::string to_string(const Stats& s);

/// The thrash limit (Note [Thrash limit], thrash_guard.h): a step whose
/// recomputation passes `ratio` times its own compute throws
/// ThrashLimitExceeded. Infinity (the default) sets none; then a step that
/// recomputes more than 10 times its own compute is reported once on
/// stderr. Returns the previous limit; throws dtr::InvalidArgument unless
/// ratio > 0.
double set_thrash_limit(double ratio);

/// A step recomputed past the thrash limit; the message says how much and
/// what to do. The results computed so far are intact.
class ThrashLimitExceeded : public dtr::Error {
 public:
  using Error::Error;
};

/// An operator the kernel cannot run on checkpointed tensors; the message
/// names it ("[dtr] aten::set_.source_Tensor: ...").
class UnsupportedOperator : public dtr::Error {
 public:
  using Error::Error;
};

}  // namespace dtr::pt

#include "dtr/torch/checkpointed_module.h"
