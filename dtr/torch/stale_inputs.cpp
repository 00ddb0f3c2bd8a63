// check_plain_inputs: a replay refuses inputs changed since capture.
#include "dtr/torch/stale_inputs.h"

#include <vector>

#include "dtr/core/error.h"
#include "dtr/torch/contents_hash.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/plain_tensors.h"

namespace dtr::pt {

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
void check_plain_inputs(const Remat& r, const c10::IValue* stack_args) {
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
    auto refuse = [&](const auto&... why) {
      throw Error(detail::concat("[dtr] cannot recompute ", op_name(r.op),
                                 ": its ",
                                 p.external ? "checkpointed" : "plain",
                                 " input '", formals[slot_args[p.slot]].name(),
                                 "' (shape ", t.sizes(), ") ", why...));
    };
    if (storage_of(t) != p.storage._unsafe_get_target()) {
      refuse(
          "was given another buffer since the value was computed (`.data = "
          "...`, set_data, vector_to_parameters), which DTR does not see. "
          "Read the value before changing its inputs, or decheckpoint it");
    }
    if (version_of(t) != p.version) {
      refuse("was written in place since the value was computed (version ",
             p.version, " -> ", version_of(t),
             "), by operations DTR does not see (only plain tensors). Keep "
             "the value resident (read it before the write), or write "
             "through checkpointed tensors");
    }
    if (p.contents != contents_hash(t)) {
      refuse(
          "holds other bytes than when the value was computed, written by a "
          "path that bumps no version counter (`.data`, "
          "`.detach().numpy()`, a raw pointer). Read the value before "
          "changing its inputs, or write them under torch.no_grad() without "
          "`.data`");
    }
  }
}

}  // namespace dtr::pt
