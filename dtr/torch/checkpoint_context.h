#pragma once
/// The process-wide DTR state for LibTorch: the core runtime, the registry
/// of live cells and rematerializers, and the boxed kernel's logic. Private
/// to dtr_torch; the public surface is dtr_torch.h.
///
/// The class is implemented across files, one job each:
///   checkpoint_context.cpp  lifecycle, public operations, budget hook
///   budget.cpp              set_budget, scoped budgets, DTR's share
///   kernel.cpp              Context::call: the orchestration of one op
///   gradients.cpp           autograd: checkpoint(), parameter gradients
///   debug_dump.cpp          DTR_DEBUG output
///   replay_check.cpp        DTR_CHECK_REPLAYS: replays against the originals
///   steps.cpp               step boundaries, the thrash limit, staging
///   fork.cpp                the context of a child of fork()
///   profiling.cpp           dtr.profile: the Chrome trace's spans
///   api.cpp, register.cpp   the C++ API and the torch.ops.dtr operators
///
/// Its parts, each with one job and a header of its own:
///   budget_state.h          the budget in force, the peak, the
///                           out-of-memory message (budget_blocks.h: what
///                           the user set)
///   cell_table.h, remat_table.h   the live cells and rematerializers
///   release_queue.h         releases and deaths, applied after a call
///   run_listeners.h         the trace recorder and auto's step, fed alike
///   shared_buffers.h        buffers the program and DTR both reach
///   parameter_watch.h       which parameters carry the gradient hook
///   backward_passes.h       when a backward pass ends: the lineage cut
///   thrash_guard.h          the thrash limit and its warning
///   write_planner.h         how each in-place write is carried out
///   holds.h                 values no longer recomputable: holds, lineage
///                           cuts, a storage's copy-on-write
///   escapes.h               plain tensors that in-place writes reached
///   replayer.h              what a call records for its replay (Remat),
///                           and the replay: the runtime's Executor
///   special_ops.h           ops not recorded as themselves (views, splits)
///   stale_inputs.h          a replay's check of its plain inputs
///   op_rules.h              the table of special operators, cached rules
///   accounting.h            a device's memory as the budget sees it
///                           (counting_allocator.h: the CPU's)
///   boxed_call.h            how an operator is called, first run and
///                           replay alike
///   checkpoint_tensor.h     the wrapper, Handle, Cell, Remat
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dtr/core/runtime.h"
#include "dtr/torch/accounting.h"
#include "dtr/torch/auto_heuristic.h"
#include "dtr/torch/backward_passes.h"
#include "dtr/torch/budget_state.h"
#include "dtr/torch/cell_table.h"
#include "dtr/torch/checkpoint_tensor.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/escapes.h"
#include "dtr/torch/holds.h"
#include "dtr/torch/kernel_parts.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/parameter_watch.h"
#include "dtr/torch/release_queue.h"
#include "dtr/torch/remat_table.h"
#include "dtr/torch/replayer.h"
#include "dtr/torch/run_listeners.h"
#include "dtr/torch/shared_buffers.h"
#include "dtr/torch/special_ops.h"
#include "dtr/torch/thrash_guard.h"
#include "dtr/torch/trace_recorder.h"
#include "dtr/torch/write_planner.h"

namespace torch::autograd {
struct Node;
}

namespace dtr::trace {
class ProfileRecorder;
}

namespace dtr::pt {

class CallGuard;

/// An OutOfMemory whose message already states the floor (Note [The floor]).
class ExplainedOutOfMemory : public OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

class Context final {
 public:
  /// The process's context; in a child of fork(), a new one (Note [Fork]).
  static Context& get();
  /// Serializes every use of the runtime and of the cells' bookkeeping.
  std::recursive_mutex& mutex() { return mutex_; }
  /// Throws dtr::Error if `w` was made under a context that fork() left
  /// behind (Note [Fork]).
  void check_current(const CheckpointTensorImpl& w) const;

  /// The boxed kernel: runs `op` on checkpointed (and plain) arguments.
  void call(const c10::OperatorHandle& op, torch::jit::Stack* stack);

  /// A checkpointed constant for `t` (no autograd; see gradients.cpp for
  /// the differentiable entry point).
  at::Tensor wrap_constant(const at::Tensor& t);
  at::Tensor decheckpoint(const at::Tensor& t);
  /// The value of `t`, resident for good (never evicted or recomputed):
  /// for handing out aliases of its buffer (numpy(), storage()).
  at::Tensor hold_value(const at::Tensor& t);
  /// The value of `t` as a plain tensor nothing in DTR reads or writes
  /// any more: its buffer when `t` is its only user, else a copy.
  at::Tensor take_plain(const at::Tensor& t);
  std::int64_t set_budget(std::int64_t bytes, BudgetScope scope);
  /// Note [Concurrent budgets]
  std::uint64_t push_budget(std::int64_t bytes, BudgetScope scope);
  void pop_budget(std::uint64_t token);
  std::int64_t budget();
  BudgetScope budget_scope();
  void set_cost_model(CostModel model) { cost_model_ = model; }
  Stats stats();
  void reset_peak();
  void evict_all();
  /// Debugging: one line per resident storage.
  void dump(std::ostream& out);
  /// Debugging: resident bytes grouped by producing op and state.
  void dump_summary(std::ostream& out);
  /// Starts (or with nullptr stops) recording a trace of every call.
  void set_recorder(TraceRecorder* recorder);
  /// Starts (or with nullptr stops) profiling (profiling.cpp); throws
  /// dtr::Error if a profile is already running.
  void set_profiler(trace::ProfileRecorder* profiler);
  /// "auto" (Note [Auto protocol]) or a fixed heuristic's name; throws
  /// InvalidArgument naming an unknown one.
  void set_heuristic(const std::string& name);
  std::string heuristic_name();
  /// Note [Thrash limit]; returns the previous limit.
  double set_thrash_limit(double ratio);

  // Steps (steps.cpp): Note [Step boundaries].
  /// A step begins: the previous one ends, unless no operator ran since
  /// the last boundary (then this is the same boundary).
  void begin_step();
  std::uint64_t steps();
  /// Staging on or off (Note [Staging]); returns whether it was on.
  bool set_staging(bool on);

  // Autograd (gradients.cpp).
  /// Called from a parameter's gradient hook during backward.
  at::Tensor parameter_gradient(const at::Tensor& grad);
  void on_backward_end(std::thread::id thread);
  void enter_nested_backward();
  void exit_nested_backward();
  void on_cut_callback_dropped(std::thread::id thread,
                               std::uint64_t generation);

  // Lifecycle hooks from Cell, Remat and Handle.
  void on_last_handle(Cell& cell);
  void on_cell_dead(Cell& cell);
  void on_remat_dead(Remat& remat);

 private:
  Context();
  // fork.cpp: Note [Fork].
  static Context* make_first();
  static void prepare_fork();
  static void after_fork_in_parent();
  static void after_fork_in_child();
  void inherit_settings(const Context& parent, bool consistent);
  // Every runtime call that can recompute or evict runs inside one:
  // release_queue.h.
  using CoreScope = ReleaseQueue::Scope;
  struct CellCounts {
    int live = 0;     // cells of the storage still alive
    int held = 0;     // of which held
    int handles = 0;  // program handles on them
  };
  CellCounts count_cells(const Storage& st) const;

  // kernel.cpp: the steps of call().
  void call_unexplained(const c10::OperatorHandle& op,
                        torch::jit::Stack* stack);
  MutationPlan plan_writes(const c10::FunctionSchema& schema,
                           const OpRules& rules, const Args& args);
  OutCells record_outputs(const c10::OperatorHandle& op,
                          const std::string& name, CallGuard& guard,
                          const Args& args, const MutationPlan& plan,
                          const Slots& slots, const Outputs& out,
                          const RngCapture& rng);
  std::int64_t reserve_moved(const Args& args, const MutationPlan& plan);
  Outputs run_op(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                 const Args& args, const MutationPlan& plan, Slots& slots);
  void note_parameters(const Args& args);
  void inherit_external(Cell& view, const Slots& slots, int input);

  TensorId checkpoint_id(const at::Tensor& t);
  void mark_visible(Cell& cell, at::Tensor buffer);
  void unmark_visible(const Cell& cell);
  /// Note [Values made before recording]
  void record_values_made_before(TraceRecorder& recorder);
  void note_peak();
  /// Bytes of the storages of held cells (unevictable); O(cells).
  std::int64_t held_bytes() const;
  /// Closes the kernel's profile span of `name` (profiling.cpp).
  void end_op_span(const std::string& name);
  std::int64_t cost_of(std::int64_t elapsed_ns, std::int64_t bytes) const;
  static void make_room_hook(std::int64_t pending, std::int64_t bytes);
  static void outside_allocation_hook(std::int64_t pending, std::int64_t bytes);
  void sync_process_budget(std::int64_t pending);
  // budget.cpp
  /// Puts what the user set into force, in budget_ and the runtime.
  void apply_budget();
  std::string explain_out_of_memory(const OutOfMemory& e) const;
  /// Runs f(); an OutOfMemory or a passed thrash limit leaves it explained.
  template <typename F>
  auto explained(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const ExplainedOutOfMemory&) {
      throw;
    } catch (const OutOfMemory& e) {
      if (debug_) dump_summary(std::cerr);
      throw ExplainedOutOfMemory(e, explain_out_of_memory(e));
    } catch (const RematLimitExceeded& e) {
      throw ThrashLimitExceeded(
          thrash_.explain(e, runtime_.stats().model_compute_ns, current_op_));
    }
  }

  std::recursive_mutex mutex_;
  // DTR_DEBUG=1: one line per kernel call (read before the parts that
  // print with it are made).
  const bool debug_ = std::getenv("DTR_DEBUG") != nullptr;
  Accounting& accounting_;  // of the device the wrapped values live on
  CellTable cells_;
  RematTable remats_;
  SharedBuffers shared_;  // Note [Program-visible buffers], captures
  Replayer replayer_{cells_, remats_, shared_, &make_room_hook};
  Runtime runtime_;
  AutoHeuristic auto_;      // Note [Auto protocol]
  RunListeners listeners_;  // the trace recorder, auto's step
  ReleaseQueue releases_;
  WritePlanner writes_{runtime_.graph(), cells_, remats_, shared_};
  Holds holds_{runtime_,   cells_,          remats_, releases_,
               listeners_, &make_room_hook, debug_};
  SpecialOps special_{[this](const c10::OperatorHandle& op,
                             torch::jit::Stack* stack) { call(op, stack); },
                      runtime_, releases_};
  Escapes escapes_;  // Note [Escapes]
  CostModel cost_model_ = CostModel::kMeasured;
  BudgetState budget_;  // what the user set, what is in force, the peak
  ThrashGuard thrash_;  // Note [Thrash limit]
  /// Hands the runtime thrash_'s remat limit for the compute so far.
  void sync_remat_limit();
  std::uint64_t ops_ = 0;
  StagingStats staging_totals_;              // of stagings turned off
  const std::string* current_op_ = nullptr;  // for out-of-memory messages
  OpRulesCache rules_;
  trace::ProfileRecorder* profiler_ = nullptr;
  std::uint64_t steps_ = 0;
  std::uint64_t ops_at_step_ = 0;  // ops_ when the current step began
  std::int64_t moved_bytes_ = 0;   // Note [Room for moved writes]
  std::int64_t room_ns_ = 0;       // Note [Op costs exclude making room]
  // gradients.cpp: Note [Plain parameter gradients], Note [Lineage cut].
  ParameterWatch parameters_;
  BackwardPasses backward_passes_;
  void queue_cut();
};

/// The hook that makes a parameter's gradient plain (gradients.cpp).
std::unique_ptr<torch::autograd::FunctionPreHook>
make_parameter_gradient_hook();

}  // namespace dtr::pt
