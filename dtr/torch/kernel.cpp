// Context::call, the boxed kernel, as a short orchestration of steps.
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "dtr/core/error.h"
#include "dtr/torch/boxed_call.h"
#include "dtr/torch/call_guard.h"
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/counting_allocator.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/plain_tensors.h"
#include "dtr/trace/profile_recorder.h"

namespace dtr::pt {

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

RngCapture capture_rng(const OpRules& rules, const Args& args) {
  RngCapture rng;
  if (!rules.random) return rng;
  for (const auto& a : args) {
    if (a.isGenerator()) rng.generator = a.toGenerator();
  }
  if (!rng.generator.defined()) {
    rng.generator = at::detail::getDefaultCPUGenerator();
  }
  std::lock_guard<std::mutex> g(rng.generator.mutex());
  rng.state = rng.generator.get_state();
  return rng;
}

}  // namespace

// Note [The boxed kernel]
// 1. Plan the writes (write_planner.h): each mutated argument (schema `(a!)`,
//    plus batch norm's hidden running statistics) is copied-on-write, moved,
//    written directly and held, or written through shared views; writing a
//    plain tensor that lineage read first cuts the lineage.
// 2. begin_call (CallGuard) materializes and locks the checkpointed
//    inputs; the op runs on plain tensors below autograd inside an
//    allocation window, so every allocation first makes room in the budget.
// 3. Results sharing an input's storage are aliases, fresh storages new
//    values; end_call records them and the Remat (replayer.h) keeps the
//    operator, the non-tensor arguments and the input cells.
// 4. The results are wrapped; in-place results swap the written wrapper's
//    Handle to the new value.
// Every exception after begin_call unwinds through the CallGuard, which
// releases the input locks.
void Context::call(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (current_fork_generation() != 0) {  // only a child of fork() has old
    const std::size_t n = op.schema().arguments().size();
    for (auto a = stack->end() - n; a != stack->end(); ++a) {
      for_each_tensor(*a, [&](const at::Tensor& t) {
        if (auto* w = as_checkpoint(t)) check_current(*w);
      });
    }
  }
  explained([&] { call_unexplained(op, stack); });
}

void Context::call_unexplained(const c10::OperatorHandle& op,
                               torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const OpRules& rules = rules_.of(op);
  const std::string& name = rules.name;
  if (profiler_ != nullptr) profiler_->begin_span();
  struct OpSpan {  // closes the profile's span on every way out
    Context& context;
    const std::string& name;
    ~OpSpan() { context.end_op_span(name); }
  } span{*this, name};
  check_supported(rules);  // throws for a refused operator
  const std::size_t n = schema.arguments().size();
  Args args(std::make_move_iterator(stack->end() - n),
            std::make_move_iterator(stack->end()));
  stack->erase(stack->end() - n, stack->end());
  // Note [Thrash limit]: the step's own compute grew since the last call.
  if (thrash_.limited()) sync_remat_limit();
  if (special_.route(op, rules, stack, args)) return;
  struct CurrentOp {  // names the operator in out-of-memory messages
    const std::string*& slot;
    const std::string* saved;
    CurrentOp(const std::string*& s, const std::string* name)
        : slot(s), saved(s) {
      slot = name;
    }
    ~CurrentOp() { slot = saved; }
  } current(current_op_, &name);

  const MutationPlan plan = plan_writes(schema, rules, args);
  note_parameters(args);
  Slots slots = collect_slots(args, plan);

  CoreScope scope(releases_);
  ++ops_;
  std::optional<CallGuard> guard;
  // May rematerialize: may run out, or thrash (explained while current_op_
  // still names this operator).
  explained([&] { guard.emplace(runtime_, slots.ids); });
  const RngCapture rng = capture_rng(rules, args);
  Outputs out = run_op(op, stack, args, plan, slots);
  classify_results(schema, rules, args, plan, slots, out);

  OutCells out_cells;
  if (out.specs.empty()) {
    guard->abort();
  } else {
    out_cells = record_outputs(op, name, *guard, args, plan, slots, out, rng);
  }
  if (plan.direct) holds_.hold_written(args, plan);
  wrap_results(stack, args, out, out_cells);
}

// Step 1, and what must happen before the inputs are locked: a lineage
// cut, a storage's copy (inside the plan), the escapes' warning.
MutationPlan Context::plan_writes(const c10::FunctionSchema& schema,
                                  const OpRules& rules, const Args& args) {
  MutationPlan plan = writes_.plan(
      schema, rules, args,
      [this](TensorId member) { holds_.copy_storage_on_write(member); },
      debug_);
  escapes_.note(rules.name, plan.escapes);
  if (plan.need_cut) holds_.cut_lineage();
  if (debug_) {
    std::fprintf(stderr, "[dtr] %s direct=%d cut=%d mem=%lld\n",
                 rules.name.c_str(), int(plan.direct), int(plan.need_cut),
                 static_cast<long long>(runtime_.stats().memory_bytes));
  }
  return plan;
}

// Step 3: the new values in the runtime's graph (end_call), in both
// listeners, and in cells; a Remat to recompute them, or holds where the
// call wrote directly.
OutCells Context::record_outputs(const c10::OperatorHandle& op,
                                 const std::string& name, CallGuard& guard,
                                 const Args& args, const MutationPlan& plan,
                                 const Slots& slots, const Outputs& out,
                                 const RngCapture& rng) {
  const std::int64_t cost = cost_of(out.elapsed_ns, out.new_bytes);
  // No note_peak() here: a kMove output is counted before its old value
  // is evicted (same buffer); the allocation hook tracks the real level.
  const std::span<const TensorId> ended =
      guard.end(name, out.specs, cost, out.workspace_bytes());
  const OutIds out_ids(ended.begin(), ended.end());
  listeners_.notify([&](RunListener& l) {
    l.call(runtime_.graph(), name, slots.ids, out_ids, out.specs, cost,
           out.workspace_bytes());
  });
  OutCells out_cells;
  for (std::size_t o = 0; o < out.specs.size(); ++o) {
    out_cells.push_back(cells_.make(out_ids[o], out.values[o]));
    const int in = out.specs[o].alias_of;
    if (in >= 0) inherit_external(*out_cells.back(), slots, in);
  }
  if (!plan.direct) {
    replayer_.record(op, runtime_.graph().tensor(out_ids[0]).op, args, plan,
                     slots, out, rng, out_ids, out_cells);
  } else {
    for (auto& c : out_cells) holds_.hold(c);
  }
  return out_cells;
}

void Context::note_parameters(const Args& args) {
  if (!at::GradMode::is_enabled()) return;
  for (const auto& a : args) {
    for_each_tensor(a, [&](const at::Tensor& t) {
      if (!t.defined() || as_checkpoint(t) != nullptr || !t.requires_grad())
        return;
      parameters_.note(t);
    });
  }
}

// Note [Room for moved writes]
// A moved write (Mutation::kMove) reuses the old value's buffer, so the
// operator allocates nothing for that result; yet end_call counts the
// result as a new storage while the old value is still resident (it is
// released just after). The trace records the call like any other (a new
// value), and the simulator makes room for every output before the op
// runs. Unreserved, the runtime's count passed the budget until the next
// allocation evicted, later and so with other staleness than predicted:
// the Transformer's dropout (`bernoulli_`, `div_` on a fresh mask) made
// the first victims differ. So room for the moved bytes is made before
// the op runs, and every allocation inside it makes room on top of them:
// the count stays within the budget and the victims are the simulator's.
// Where that room cannot be made (the locked inputs alone fill the
// budget) the write goes ahead without it, as before: a move needs no new
// memory, so a budget the runtime met must not become out of memory.
std::int64_t Context::reserve_moved(const Args& args,
                                    const MutationPlan& plan) {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i < plan.moved.size() && plan.moved[i] && args[i].isTensor()) {
      const Cell& cell = *as_checkpoint(args[i].toTensor())->handle()->cell;
      bytes += static_cast<std::int64_t>(cell.value.storage().nbytes());
    }
  }
  if (bytes == 0) return 0;
  try {
    runtime_.make_room(bytes);
  } catch (const OutOfMemory&) {
    return 0;  // below the simulator's floor, not the runtime's
  }
  return bytes;
}

// Step 2: the operator on plain values, below autograd, with every
// allocation making room in the budget first.
Outputs Context::run_op(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                        const Args& args, const MutationPlan& plan,
                        Slots& slots) {
  Outputs out;
  const std::size_t n_returns = op.schema().returns().size();
  AllocationWindow window(&make_room_hook);
  push_plain_args(
      args, [&](std::size_t i) { return plan.is_stripped(i); },
      [&](std::size_t i, std::size_t slot, const at::Tensor& t) {
        at::Tensor v = t;
        if (slots.cells[slot]) {
          v = slots.cells[slot]->value;
          DTR_ASSERT(v.defined(), "input of ", op_name(op), " not resident");
          if (plan.write[i] && !plan.direct) {
            if (!plan.moved[i]) v = cow_clone(v);
            slots.cow.push_back(static_cast<int>(slot));
          }
        }
        slots.values[slot] = v;
        return v;
      },
      stack);
  struct Reserve {  // Note [Room for moved writes]
    std::int64_t& slot;
    ~Reserve() { slot = 0; }
  } reserve{moved_bytes_};
  moved_bytes_ = reserve_moved(args, plan);
  const std::int64_t start = now_ns();
  const std::int64_t room_before = room_ns_;
  call_below_autograd(op, stack, at::GradMode::is_enabled());
  // Note [Op costs exclude making room]
  out.elapsed_ns = now_ns() - start - (room_ns_ - room_before);
  out.peak_bytes = window.peak_bytes() + moved_bytes_;  // Note [Workspace]
  out.results.assign(std::make_move_iterator(stack->end() - n_returns),
                     std::make_move_iterator(stack->end()));
  stack->erase(stack->end() - n_returns, stack->end());
  return out;
}

// A view of a program's tensor is in the program's buffer too.
void Context::inherit_external(Cell& view, const Slots& slots, int input) {
  for (std::size_t k = 0; k < slots.input.size(); ++k) {
    if (slots.input[k] != input) continue;
    if (!slots.cells[k]->external.defined()) return;
    mark_visible(view, slots.cells[k]->external);
    view.external_grad_leaf = slots.cells[k]->external_grad_leaf;
    return;
  }
}

}  // namespace dtr::pt
