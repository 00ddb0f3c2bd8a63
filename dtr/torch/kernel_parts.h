#pragma once
/// The intermediate records of one boxed-kernel call (Note [The boxed
/// kernel]), passed between the steps in kernel.cpp, write_planner.cpp,
/// holds.cpp and replayer.cpp, and the steps that read only these records
/// (kernel_parts.cpp). Private to dtr_torch.
#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "dtr/core/runtime.h"
#include "dtr/torch/checkpoint_tensor.h"
#include "dtr/torch/op_rules.h"

namespace dtr::pt {

// Note [Inline call records]
// A small operator's call used to make some 40 heap allocations on top of
// the operator's own: one per list below, per list of its Remat, per
// Handle list. Nearly all of these lists hold one to four elements, so
// they live inline (c10::SmallVector); lists that are empty unless the
// call writes in place stay std::vector (an empty one allocates nothing).

/// The arguments of one call, as taken off the stack.
using Args = c10::SmallVector<c10::IValue, 8>;

/// Step 1: what the call writes and how each write is carried out.
struct MutationPlan {
  c10::SmallVector<bool, 8> write;  ///< per argument: written in place
  std::vector<int> stripped;        ///< hidden writes, passed as None on replay
  c10::SmallVector<bool, 8> moved;  ///< per argument: Mutation::kMove
  std::vector<TensorId> shared_storages;    ///< written in place, views live
  std::vector<at::Tensor> external_writes;  ///< program tensors written
  bool direct = false;    ///< the op runs in place on the real values
  bool need_cut = false;  ///< a lineage cut must come first
  bool any_cow = false;   ///< some argument is copied before the write
  int escapes = 0;  ///< plain tensors written in grad mode (Note [Escapes])
  bool is_stripped(std::size_t i) const {
    return std::find(stripped.begin(), stripped.end(), static_cast<int>(i)) !=
           stripped.end();
  }
};

/// Step 2: the call's tensor slots in traversal order (ivalue_tensors.h).
struct Slots {
  c10::SmallVector<std::shared_ptr<Cell>, 4> cells;  ///< null: plain tensor
  c10::SmallVector<int, 4> arg;       ///< the argument each slot came from
  c10::SmallVector<int, 4> input;     ///< index into `ids`, or -1 for plain
  c10::SmallVector<TensorId, 4> ids;  ///< the checkpointed inputs
  c10::SmallVector<at::Tensor, 4> values;  ///< what the operator received
  std::vector<int> cow;                    ///< slots cloned before the write
  bool is_cow(std::size_t slot) const {
    return std::find(cow.begin(), cow.end(), static_cast<int>(slot)) !=
           cow.end();
  }
};

/// Step 3: the operator's results, classified for the runtime.
struct Outputs {
  c10::SmallVector<c10::IValue, 2> results;  ///< as the operator returned
  c10::SmallVector<OutputSpec, 2> specs;     ///< one per new value
  c10::SmallVector<at::Tensor, 2> values;    ///< plain value of each spec
  c10::SmallVector<int, 2> result_map;   ///< per flattened result: spec or -1
  c10::SmallVector<int, 2> inplace_arg;  ///< per return: written arg or -1
  std::int64_t new_bytes = 0;
  std::int64_t elapsed_ns = 0;
  /// The most memory the call held at once: its allocations live together
  /// at their peak, and the room reserved for moved writes.
  std::int64_t peak_bytes = 0;
  /// What the call held at its peak beyond its new values (Note
  /// [Workspace], dtr/core/runtime.cpp).
  std::int64_t workspace_bytes() const {
    return peak_bytes > new_bytes ? peak_bytes - new_bytes : 0;
  }
};

/// Step 4: the runtime's ids of the new values and their cells.
using OutIds = c10::SmallVector<TensorId, 2>;
using OutCells = c10::SmallVector<std::shared_ptr<Cell>, 2>;

/// The random-number state a replay must reproduce.
struct RngCapture {
  at::Generator generator;
  at::Tensor state;
};

/// Step 2's slots of `args`: each tensor in traversal order, its cell if
/// checkpointed; hidden writes (passed as None on replay) are skipped.
Slots collect_slots(const Args& args, const MutationPlan& plan);
/// Step 3: fills `out`'s specs and maps from its results. A result in a
/// checkpointed input's storage is its alias; one in a plain input's
/// storage, nested, or the operator's metadata result stays plain. Throws
/// UnsupportedOperator if two results share one new storage.
void classify_results(const c10::FunctionSchema& schema, const OpRules& rules,
                      const Args& args, const MutationPlan& plan,
                      const Slots& slots, Outputs& out);
/// Step 4: pushes the results onto `stack`, new values wrapped; an
/// in-place result is the written argument, rebound to its new cell.
void wrap_results(torch::jit::Stack* stack, const Args& args,
                  const Outputs& out, const OutCells& out_cells);

}  // namespace dtr::pt
