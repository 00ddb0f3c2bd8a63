#pragma once
/// The wrapper tensor and the records behind it.
///
/// Note [Handle, Cell, Remat]
/// A CheckpointTensorImpl is a storage-less TensorImpl whose dispatch keys
/// are PrivateUse1 (+ its autograd key), device CPU, with sizes and strides
/// copied from the value it stands for. Shallow copies (.data(), detach,
/// saved variables) share one Handle, a mutable slot: copy-on-write swaps
/// the Handle's Cell, so every copy sees the new value. A Cell is one value
/// of the core runtime's graph (a TensorId): the plain tensor when resident,
/// and the Remat (operator + saved arguments + input cells) that recomputes
/// it. Cells own their producer Remat and Remats own their input Cells, so
/// lineage lives exactly as long as something can still need it.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "dtr/core/graph.h"

namespace dtr::pt {

struct Remat;
struct Handle;

/// 0 in the process that loaded DTR, one more in each child of fork():
/// records made under an earlier one belong to a context the child left
/// behind, and are never used or counted again (Note [Fork]).
std::uint64_t current_fork_generation();

struct Cell : std::enable_shared_from_this<Cell> {
  TensorId id = kNoId;
  at::Tensor value;              ///< undefined while evicted
  std::shared_ptr<Remat> remat;  ///< null: cannot be recomputed (held)
  int handles = 0;               ///< Handles pointing here (program refs)
  c10::SmallVector<Handle*, 2> handle_list;  ///< those (for rebinding)
  bool held = false;     ///< locked in the runtime until death
  bool core_ref = true;  ///< still owns its runtime external ref
  /// For values in a buffer the program reaches without DTR (Note
  /// [Program-visible buffers]): a tensor given to checkpoint() and its
  /// views (that tensor, detached: same buffer and version counter), or a
  /// value handed out by hold_value(). Writes go into it in place.
  at::Tensor external;
  bool external_grad_leaf = false;  ///< that tensor is a leaf needing grad
  bool program_input = false;       ///< made by checkpoint() itself
  std::thread::id owner;  ///< the thread that computed it (Note [Lineage cut])
  std::uint64_t fork_generation = current_fork_generation();
  ~Cell();
};

/// How to recompute the outputs of one operator call.
struct Remat {
  c10::OperatorHandle op;
  /// Wrappers replaced by undefined tensors. The lists are inline (Note
  /// [Inline call records]).
  c10::SmallVector<c10::IValue, 6> args;
  /// Per tensor slot of `args` in traversal order: index into `inputs`, or
  /// -1 for a plain tensor kept in `args`.
  c10::SmallVector<int, 4> slots;
  c10::SmallVector<std::shared_ptr<Cell>, 4> inputs;
  std::vector<int> cow_slots;  ///< slots cloned before the op (in-place)
  /// Per flattened tensor result: index into `outputs`, or -1 (ignored).
  c10::SmallVector<int, 2> result_map;
  c10::SmallVector<TensorId, 2> outputs;  ///< runtime ids (cells may be dead)
  std::vector<int> stripped_args;         ///< hidden mutations passed as None
  at::Generator generator;  ///< for random ops: the generator used
  at::Tensor rng_state;     ///< its state before the op
  /// Grad mode at the call. Note [Replay under the call's grad mode]:
  /// replays run inside backward (grad mode off), and some kernels return
  /// other results by it (oneDNN's LSTM, mkldnn_rnn_layer, computes the
  /// workspace its backward reads only with grad mode on).
  bool grad_mode = false;
  std::vector<const c10::StorageImpl*> captured;  ///< plain storages read
  /// Plain tensors read, with their version counter at capture: a replay
  /// refuses to run if one was written since (Note [Stale plain inputs]).
  struct PlainInput {
    int slot;
    std::uint32_t version;
    /// Its buffer at capture: rebinding (`.data = ...`) bumps no version.
    /// Weak, so the old buffer is freed and its address not reused.
    c10::weak_intrusive_ptr<c10::StorageImpl> storage;
    bool external;  ///< a checkpoint()ed tensor's cell, not a plain slot
    /// Its bytes' hash at capture (contents_hash): writes through `.data`
    /// or numpy bump no version counter either.
    std::optional<std::uint64_t> contents;
  };
  c10::SmallVector<PlainInput, 2> plain_inputs;
  OpId op_id = kNoId;
  std::thread::id owner;  ///< the thread that ran the op
  std::uint64_t fork_generation = current_fork_generation();
  explicit Remat(c10::OperatorHandle h) : op(std::move(h)) {}
  ~Remat();
};

struct Handle {
  std::shared_ptr<Cell> cell;
  std::uint64_t fork_generation = current_fork_generation();
  explicit Handle(std::shared_ptr<Cell> c);
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  void reset(std::shared_ptr<Cell> c);
};

class CheckpointTensorImpl final : public c10::TensorImpl {
 public:
  /// A wrapper for `cell`, whose value must be resident (for metadata).
  explicit CheckpointTensorImpl(std::shared_ptr<Handle> handle);
  /// A shallow copy: metadata comes from copy_tensor_metadata, since the
  /// value may be evicted.
  CheckpointTensorImpl(std::shared_ptr<Handle> handle, caffe2::TypeMeta dtype);
  const std::shared_ptr<Handle>& handle() const { return handle_; }
  /// Copies sizes/strides/offset from a resident value (after COW).
  void refresh_metadata(const at::Tensor& value);
  /// Points this wrapper alone (not its shallow copies) at another Handle.
  void set_handle(std::shared_ptr<Handle> handle) {
    handle_ = std::move(handle);
  }

  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      const c10::VariableVersion& version_counter,
      bool allow_tensor_metadata_change) const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      c10::VariableVersion&& version_counter,
      bool allow_tensor_metadata_change) const override;
  void shallow_copy_from(
      const c10::intrusive_ptr<c10::TensorImpl>& impl) override;
  const char* tensorimpl_type_name() const override {
    return "CheckpointTensorImpl";
  }

 private:
  void use_device_autocast();
  /// Storage and data pointer access throw, saying what to do instead.
  void refuse_memory_access();
  std::shared_ptr<Handle> handle_;
};

/// The wrapper behind `t`, or nullptr for a plain tensor.
CheckpointTensorImpl* as_checkpoint(const at::Tensor& t);
/// A new wrapper tensor for a new Handle on `cell`.
at::Tensor make_wrapper(std::shared_ptr<Cell> cell);

}  // namespace dtr::pt
