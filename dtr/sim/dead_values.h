#pragma once
/// Note [Forgetting dead values]
/// The LibTorch layer forgets a value (Runtime::forget) once nothing can
/// read it again: the program dropped its last handle (RELEASE) and no
/// live lineage reads it. Forgetting frees a storage for good once all its
/// values are forgotten, and pins the resident storages computed from it,
/// which can no longer be recomputed. A simulator that kept dead values
/// would have more to evict than the runtime had and would free the
/// lineage-less values the runtime forgot only at their eviction; for
/// recorded traces (Program::forgets_dead) the simulator forgets them too,
/// tracking lineage as the layer does (dtr/torch/checkpoint_tensor.h):
///  - an op's lineage lives while one of its outputs lives and still holds
///    it; it keeps the op's inputs alive;
///  - a value lets go of its op's lineage when held (PIN: the layer drops
///    the rematerializer of a held value), when it dies, and at a lineage
///    cut (every value's, Program::lineage_cuts);
///  - a value dies when it has no handle and no live lineage reads it.
/// Deaths cascade through a work list (a chain of a million ops must not
/// recurse). A constant dies too but is not forgotten: the layer's inputs
/// are 0-byte constants in the trace. A dead value is never used again
/// (its runtime tensor may be recycled): it has no handle, and the trace
/// reader refuses a name used after its release.
#include <cstdint>
#include <vector>

#include "dtr/core/runtime.h"
#include "dtr/trace/program.h"

namespace dtr::sim {

class DeadValues {
 public:
  /// `tensor_of` maps the program's values to the runtime's tensors (the
  /// replay fills it); both must outlive this.
  DeadValues(const trace::Program& program, Runtime& rt,
             const std::vector<TensorId>& tensor_of);

  void on_compute(std::uint32_t op);
  void on_retain(trace::ValueId v) { ++refs_[v]; }
  void on_release(trace::ValueId v);
  void on_pin(trace::ValueId v);
  void on_lineage_cut();

 private:
  void let_go_of_lineage(trace::ValueId v);
  void check(trace::ValueId v);
  void drain();

  const trace::Program& program_;
  Runtime& rt_;
  const std::vector<TensorId>& tensor_of_;
  std::vector<std::int32_t> refs_;           // per value: handles
  std::vector<std::int32_t> readers_;        // per value: live lineages
  std::vector<std::uint32_t> op_of_;         // per value
  std::vector<std::uint8_t> holds_lineage_;  // per value
  std::vector<std::uint8_t> dead_;           // per value
  std::vector<std::int32_t> holders_;        // per op: values holding it
  std::vector<trace::ValueId> computed_;     // values made so far
  std::vector<trace::ValueId> work_;         // values to check
};

}  // namespace dtr::sim
