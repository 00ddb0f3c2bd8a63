// WritePlanner: how each in-place write of a call is carried out.
#include "dtr/torch/write_planner.h"

#include <cstdio>

#include "dtr/core/error.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/plain_tensors.h"

namespace dtr::pt {

namespace {

// A written list's element, not an argument of its own.
constexpr std::size_t kListElement = static_cast<std::size_t>(-1);

}  // namespace

struct WritePlanner::Call {
  const std::string& name;
  c10::function_ref<void(TensorId)> copy_storage;
  bool debug;
  MutationPlan plan;
};

MutationPlan WritePlanner::plan(const c10::FunctionSchema& schema,
                                const OpRules& rules, const Args& args,
                                c10::function_ref<void(TensorId)> copy_storage,
                                bool debug) const {
  const auto& formals = schema.arguments();
  Call call{rules.name, copy_storage, debug, {}};
  MutationPlan& plan = call.plan;
  plan.write.resize(args.size());
  plan.moved.resize(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    plan.write[i] = is_write(formals[i]);
  }
  plan.stripped = hidden_writes(rules, args);
  for (int i : plan.stripped) plan.write[i] = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!plan.write[i] || args[i].isNone()) continue;
    if (args[i].isTensor()) {
      plan_write(call, args[i].toTensor(), plan.is_stripped(i), i);
    } else if (args[i].isTensorList() || args[i].isList()) {
      // Note [Written tensor lists]
      // `_foreach_add_(self, other)` and friends write every element in
      // place: each checkpointed element is written directly and held;
      // one that lineage still reads gets a lineage cut first.
      for_each_tensor(args[i], [&](const at::Tensor& t) {
        plan_write(call, t, false, kListElement);
      });
    } else {
      throw UnsupportedOperator(
          detail::concat("[dtr] ", rules.name, ": mutated argument '",
                         formals[i].name(), "' is not a tensor"));
    }
  }
  // A copy-on-write candidate in an op that must run in place: its old
  // value may be read by lineage, so cut first.
  if (plan.direct && plan.any_cow) plan.need_cut = true;
  return std::move(call.plan);
}

void WritePlanner::plan_write(Call& call, const at::Tensor& t, bool hidden,
                              std::size_t arg) const {
  if (!t.defined()) return;
  MutationPlan& plan = call.plan;
  auto* w = as_checkpoint(t);
  if (w == nullptr) {  // a plain tensor: written in place
    if (!hidden) plan.direct = true;
    if (shared_.captured(storage_of(t))) plan.need_cut = true;
    if (!hidden && at::GradMode::is_enabled()) ++plan.escapes;
    return;
  }
  if (hidden) {
    throw UnsupportedOperator(detail::concat(
        "[dtr] ", call.name,
        ": running statistics must be plain tensors, not checkpointed ones"));
  }
  const Cell& cell = *w->handle()->cell;
  if (program_visible(cell)) {
    plan_external_write(call, t, cell);
    return;
  }
  const Mutation m = classify(t, cell);
  if (call.debug) {
    std::fprintf(stderr, "[dtr]   %s arg %zu mutation %d handles %d remat %d\n",
                 call.name.c_str(), arg, static_cast<int>(m), cell.handles,
                 static_cast<int>(cell.remat != nullptr));
  }
  if (m == Mutation::kShared) {
    call.copy_storage(cell.id);  // rebinds t's handle: a new cell
    plan.shared_storages.push_back(w->handle()->cell->id);
    plan.direct = true;
    return;
  }
  if (m == Mutation::kSharedViews) plan.shared_storages.push_back(cell.id);
  if (arg == kListElement) {  // Note [Written tensor lists]
    if (m == Mutation::kCopyOnWrite) plan.need_cut = true;
    plan.direct = true;
    return;
  }
  if (m == Mutation::kMove) plan.moved[arg] = true;
  if (m == Mutation::kCopyOnWrite || m == Mutation::kMove) {
    plan.any_cow = true;
  } else {
    plan.direct = true;
  }
}

// Note [Writes into the program's tensors]
// A tensor given to checkpoint() (a module's input, a state the program
// passes in) is the program's own buffer: a write into it, or into a view
// of it, must land there, as it would without DTR, and bump its version
// counter, so autograd still refuses to backpropagate through a value it
// saved and that was overwritten, and replays that read the old contents
// refuse to run (Note [Stale plain inputs]). Lineage that reads it is cut
// first. A leaf that requires grad cannot be written in grad mode, as in
// PyTorch.
void WritePlanner::plan_external_write(Call& call, const at::Tensor& t,
                                       const Cell& cell) const {
  // `x.data.clamp_()` writes a leaf through a wrapper that does not
  // require grad: allowed, as in PyTorch.
  if (cell.external_grad_leaf && t.requires_grad() &&
      at::GradMode::is_enabled()) {
    throw UnsupportedOperator(detail::concat(
        "[dtr] ", call.name,
        ": a leaf Variable that requires grad is being used in an in-place "
        "operation"));
  }
  MutationPlan& plan = call.plan;
  if (lineage_reads_storage(cell.id)) plan.need_cut = true;
  plan.shared_storages.push_back(cell.id);
  if (cell.external.defined()) plan.external_writes.push_back(cell.external);
  plan.direct = true;
}

bool WritePlanner::lineage_reads_storage(TensorId member) const {
  for (TensorId t : graph_.storage(graph_.tensor(member).storage).tensors) {
    for (OpId consumer : graph_.tensor(t).consumers) {
      if (remats_.contains(consumer)) return true;
    }
  }
  return false;
}

bool WritePlanner::program_visible(const Cell& cell) const {
  return cell.external.defined() ||
         shared_.visible(graph_.tensor(cell.id).storage);
}

Mutation WritePlanner::classify(const at::Tensor& wrapper,
                                const Cell& cell) const {
  const dtr::Tensor& t = graph_.tensor(cell.id);
  const Storage& st = graph_.storage(t.storage);
  bool siblings = false;       // other live values in this storage
  bool program_views = false;  // of which the program holds some
  for (TensorId other : st.tensors) {
    const Cell* c = other == cell.id ? nullptr : cells_.find(other);
    if (c == nullptr) continue;
    siblings = true;
    program_views |= c->handles > 0;
  }
  if (program_views) {
    // The program sees the write through its other views, as in PyTorch:
    // written in place. If lineage read the storage into another storage
    // (which could be evicted and replayed), the storage is copied first.
    for (TensorId member : st.tensors) {
      for (OpId consumer : graph_.tensor(member).consumers) {
        if (!remats_.contains(consumer)) continue;
        for (TensorId out : graph_.op(consumer).outputs) {
          if (graph_.tensor(out).storage != t.storage) return Mutation::kShared;
        }
      }
    }
    return Mutation::kSharedViews;
  }
  // Only lineage reads the siblings: copy what is written, keep the rest.
  if (t.is_alias || siblings) return Mutation::kCopyOnWrite;
  // Nothing but the program's handle reads this value: no need to keep the
  // old one. A recomputable value is mutated in place and the result is a
  // new value whose replay recomputes the old one and mutates a copy; a
  // value that cannot be recomputed is mutated and stays held.
  const long refs = cell.weak_from_this().use_count();
  if (refs == cell.handles && cell.handles == 1) {
    return cell.remat ? Mutation::kMove : Mutation::kDirect;
  }
  const bool in_graph = wrapper.requires_grad() || wrapper.grad_fn();
  if (!in_graph && refs == cell.handles) return Mutation::kDirect;
  return Mutation::kCopyOnWrite;
}

}  // namespace dtr::pt
