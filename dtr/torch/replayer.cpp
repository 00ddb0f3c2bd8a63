#include "dtr/torch/replayer.h"

#include <algorithm>
#include <optional>

#include "dtr/core/error.h"
#include "dtr/torch/boxed_call.h"
#include "dtr/torch/contents_hash.h"
#include "dtr/torch/counting_allocator.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/plain_tensors.h"
#include "dtr/torch/stale_inputs.h"

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

void Replayer::record(const c10::OperatorHandle& op, OpId op_id,
                      const Args& args, const MutationPlan& plan,
                      const Slots& slots, const Outputs& out,
                      const RngCapture& rng, const OutIds& out_ids,
                      const OutCells& out_cells) {
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
  remat->op_id = op_id;
  remats_.set(remat->op_id, remat.get());
  for (auto& c : out_cells) c->remat = remat;
}

void Replayer::replay(const Graph& graph, OpId op_id) {
  Remat* found = remats_.find(op_id);
  DTR_ASSERT(found != nullptr, "no rematerializer for op ", op_id, " (",
             graph.op(op_id).name, ")");
  Remat& r = *found;
  check_plain_inputs(r, r.args.data());
  torch::jit::Stack stack;
  {
    AllocationWindow window(make_room_);
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
        if (check_) check_->compare(id, v, op_name(r.op));
      }
    });
  }
}

void Replayer::release_storage(const Graph& graph, StorageId s) {
  for (TensorId t : graph.storage(s).tensors) {
    if (Cell* c = cells_.find(t)) {
      if (check_) check_->save(t, c->value);
      c->value = at::Tensor();
    }
  }
}

}  // namespace dtr::pt
