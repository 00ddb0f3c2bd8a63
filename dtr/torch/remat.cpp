// Rematerializers: what a call records so its outputs can be recomputed,
// and the replay itself (the runtime's Executor callbacks).
#include <optional>

#include "dtr/core/error.h"
#include "dtr/torch/boxed_call.h"
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/contents_hash.h"
#include "dtr/torch/counting_allocator.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/plain_tensors.h"

namespace dtr::pt {

namespace {

// Restores a generator's state when a replay ends (also on exceptions).
struct RngSwap {
  at::Generator gen;
  at::Tensor saved;
  RngSwap(at::Generator g, const at::Tensor& state) : gen(std::move(g)) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    saved = gen.get_state();
    gen.set_state(state);
  }
  ~RngSwap() {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(saved);
  }
};

}  // namespace

void Context::build_remat(const c10::OperatorHandle& op, const Args& args,
                          const MutationPlan& plan, const Slots& slots,
                          const Outputs& out, const RngCapture& rng,
                          const OutIds& out_ids, const OutCells& out_cells) {
  auto remat = std::make_shared<Remat>(op);
  remat->owner = std::this_thread::get_id();
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (plan.is_stripped(i)) {
      remat->args.emplace_back();  // None
      continue;
    }
    remat->args.push_back(map_tensors(args[i], [&](const at::Tensor& t) {
      return as_checkpoint(t) != nullptr ? at::Tensor() : t;
    }));
  }
  remat->slots.assign(slots.input.begin(), slots.input.end());
  for (std::size_t k = 0; k < slots.cells.size(); ++k) {
    if (slots.cells[k]) {
      remat->inputs.push_back(slots.cells[k]);
      if (slots.cells[k]->external.defined()) {
        const at::Tensor& t = slots.cells[k]->external;
        remat->plain_inputs.push_back({static_cast<int>(k), version_of(t),
                                       t.storage().getWeakStorageImpl(), true,
                                       contents_hash(t)});
      }
    } else if (const auto* s = storage_of(slots.values[k])) {
      remat->captured.push_back(s);
      shared_.capture(s);
      const at::Tensor& t = slots.values[k];
      remat->plain_inputs.push_back({static_cast<int>(k), version_of(t),
                                     t.storage().getWeakStorageImpl(), false,
                                     contents_hash(t)});
    }
  }
  remat->stripped_args = plan.stripped;  // both empty unless it writes
  remat->cow_slots = slots.cow;
  remat->result_map.assign(out.result_map.begin(), out.result_map.end());
  remat->outputs.assign(out_ids.begin(), out_ids.end());
  remat->generator = rng.generator;
  remat->rng_state = rng.state;
  remat->grad_mode = at::GradMode::is_enabled();
  remat->op_id = runtime_.graph().tensor(out_ids[0]).op;
  remats_.set(remat->op_id, remat.get());
  for (auto& c : out_cells) c->remat = remat;
}

// Note [Stale plain inputs]
// A Remat keeps the plain tensors its operator read (parameters, plain
// inputs) by reference. Writes the kernel sees cut the lineage first, and
// a parameter's gradient step comes after the cut at the end of backward;
// a write made entirely of plain tensors between capture and replay (an
// optimizer, a manual update) is invisible to the kernel. The version
// counter is not: a replay refuses to compute from a plain input written
// since it was captured, instead of returning a wrong value. The same holds
// for the tensors given to checkpoint(): their cell shares the program's
// buffer and version counter. Some writes bump no counter: through `.data`
// (a new counter on the same buffer), through numpy or a raw pointer; and
// `.data = ...` gives the tensor another buffer. So the capture also keeps
// the buffer (weakly) and a hash of the bytes read, and a replay compares
// all three. Hashing costs one read of each plain input per capture and per
// replay: under 1 % of the wall time of every `dtr train` model at 0.5.
void Context::check_plain_inputs(const Remat& r,
                                 const c10::IValue* stack_args) const {
  if (r.plain_inputs.empty()) return;
  std::vector<at::Tensor> plain_slots;
  std::vector<int> slot_args;
  const auto& formals = r.op.schema().arguments();
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    for_each_tensor(stack_args[i], [&](const at::Tensor& t) {
      plain_slots.push_back(t);
      slot_args.push_back(static_cast<int>(i));
    });
  }
  for (const auto& p : r.plain_inputs) {
    const at::Tensor& t =
        p.external ? r.inputs[r.slots[p.slot]]->external : plain_slots[p.slot];
    if (storage_of(t) != p.storage._unsafe_get_target()) {
      throw Error(detail::concat(
          "[dtr] cannot recompute ", op_name(r.op), ": its ",
          p.external ? "checkpointed" : "plain", " input '",
          formals[slot_args[p.slot]].name(), "' (shape ", t.sizes(),
          ") was given another buffer since the value was computed (`.data "
          "= ...`, set_data, vector_to_parameters), which DTR does not see. "
          "Read the value before changing its inputs, or decheckpoint it"));
    }
    if (version_of(t) != p.version) {
      throw Error(detail::concat(
          "[dtr] cannot recompute ", op_name(r.op), ": its ",
          p.external ? "checkpointed" : "plain", " input '",
          formals[slot_args[p.slot]].name(), "' (shape ", t.sizes(),
          ") was written in place since the value was computed (version ",
          p.version, " -> ", version_of(t),
          "), by operations DTR does not see (only plain tensors). Keep the "
          "value resident (read it before the write), or write through "
          "checkpointed tensors"));
    }
    if (p.contents == contents_hash(t)) continue;
    throw Error(detail::concat(
        "[dtr] cannot recompute ", op_name(r.op), ": its ",
        p.external ? "checkpointed" : "plain", " input '",
        formals[slot_args[p.slot]].name(), "' (shape ", t.sizes(),
        ") holds other bytes than when the value was computed, written by "
        "a path that bumps no version counter (`.data`, `.detach().numpy()`"
        ", a raw pointer). Read the value before changing its inputs, or "
        "write them under torch.no_grad() without `.data`"));
  }
}

void Context::replay(const Graph& graph, OpId op_id) {
  Remat* found = remats_.find(op_id);
  DTR_ASSERT(found != nullptr, "no rematerializer for op ", op_id, " (",
             graph.op(op_id).name, ")");
  Remat& r = *found;
  check_plain_inputs(r, r.args.data());
  torch::jit::Stack stack;
  {
    AllocationWindow window(&make_room_hook);
    push_plain_args(
        r.args, [](std::size_t) { return false; },
        [&](std::size_t, std::size_t slot, const at::Tensor& t) {
          const int in = r.slots[slot];
          if (in < 0) return t;
          at::Tensor v = r.inputs[in]->value;
          DTR_ASSERT(v.defined(), "replay of ", graph.op(op_id).name,
                     ": input not resident");
          if (std::find(r.cow_slots.begin(), r.cow_slots.end(),
                        static_cast<int>(slot)) != r.cow_slots.end()) {
            v = cow_clone(v);
          }
          return v;
        },
        &stack);
    std::optional<RngSwap> rng;
    if (r.rng_state.defined()) rng.emplace(r.generator, r.rng_state);
    call_below_autograd(r.op, &stack, r.grad_mode);
  }
  std::size_t f = 0;
  for (const auto& result : stack) {
    for_each_tensor(result, [&](const at::Tensor& v) {
      const int idx = r.result_map[f++];
      if (idx < 0) return;
      if (!v.defined()) {
        throw Error(detail::concat("[dtr] replay of ", op_name(r.op),
                                   " returned no value for its result ", f - 1,
                                   ", which the first call computed"));
      }
      const TensorId id = r.outputs[idx];
      Cell* c = cells_.find(id);
      // Keep a value that is still resident: its views share its storage.
      if (c != nullptr && !c->value.defined()) {
        c->value = v;
        if (replay_check_) replay_check_->compare(id, v, op_name(r.op));
      }
    });
  }
}

void Context::release_storage(const Graph& graph, StorageId s) {
  for (TensorId t : graph.storage(s).tensors) {
    if (Cell* c = cells_.find(t)) {
      if (replay_check_) replay_check_->save(t, c->value);
      c->value = at::Tensor();
    }
  }
}

}  // namespace dtr::pt
