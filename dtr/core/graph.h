#pragma once
/// The dependency graph DTR keeps: operators, the tensors they produce, and
/// the storages (buffers) those tensors live in. A storage is the unit of
/// eviction; an alias (a view) is a tensor that shares its input's storage.
/// Evicted storages stay so they can be recomputed; records are recycled only
/// once Runtime::forget() has made them unreachable (Note [Forgetting]).
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <string>
#include <vector>

#include "dtr/core/small_vector.h"

namespace dtr {

using TensorId = std::uint32_t;
using StorageId = std::uint32_t;
using OpId = std::uint32_t;
inline constexpr std::uint32_t kNoId =
    std::numeric_limits<std::uint32_t>::max();

// Note [Graph arena]
// The small per-record lists (inputs, outputs, consumers, a storage's
// tensors) are SmallVectors, inline up to a few elements (Note [Inline
// lists]); op names live in a pool resource owned by the Graph. Dead
// records go on free lists and keep their lists' capacity when reused, so a
// steady loop that forgets what it no longer needs reaches a fixed size; the
// pool (not a monotonic arena) takes back the blocks a name outgrows.

/// One operator call: reads `inputs`, produces `outputs` (all at once).
struct Op {
  explicit Op(std::pmr::memory_resource* arena) : name(arena) {}
  std::pmr::string name;
  std::int64_t cost_ns = 0;      ///< measured or modelled compute time
  std::int64_t total_bytes = 0;  ///< sum of the non-alias output sizes
  /// Scratch the op allocates and frees while it runs, on top of its
  /// outputs at its peak (Note [Workspace]).
  std::int64_t workspace_bytes = 0;
  SmallVector<TensorId, 4> inputs;   ///< in argument order (may repeat)
  SmallVector<TensorId, 2> outputs;  ///< in result order (consecutive ids)
  bool constant = false;             ///< a nullary op nothing can recompute
  bool dead = false;                 ///< recycled: on the graph's free list
};

/// One tensor (a value, or a view of another value's storage).
struct Tensor {
  OpId op = kNoId;
  std::uint32_t index = 0;  ///< position among op's outputs
  StorageId storage = kNoId;
  std::int64_t bytes = 0;  ///< 0 for aliases
  bool is_alias = false;
  bool defined = false;            ///< storage resident and view rebuilt
  std::uint32_t ext_refs = 0;      ///< handles the program holds
  bool forgotten = false;          ///< Runtime::forget() was called
  bool dead = false;               ///< recycled: on the graph's free list
  SmallVector<OpId, 4> consumers;  ///< live ops that read this tensor
};

/// One buffer. Aliases share the root tensor's storage.
struct Storage {
  std::int64_t bytes = 0;
  std::int64_t compute_ns = 0;       ///< cost of the unique ops of `tensors`
  SmallVector<TensorId, 4> tensors;  ///< tensors[0] is the root
  std::uint32_t locks = 0;           ///< internal: pending computations
  std::uint32_t ext_refs = 0;        ///< sum of the tensors' ext_refs
  std::uint32_t forgotten = 0;       ///< how many of `tensors` are forgotten
  std::int64_t last_access = 0;      ///< clock of the last use (staleness)
  std::uint32_t pool_slot = kNoId;   ///< position in the eviction pool
  std::uint64_t pool_seq = 0;        ///< insertion number in the pool
  bool resident = false;             ///< buffer resident
  bool pinned = false;               ///< permanently locked
  bool constant = false;             ///< cannot be recomputed
  bool banished = false;             ///< freed for good (banish policy)
  bool banish_pending = false;       ///< waiting for evicted dependents
  bool computed = false;             ///< has been resident at least once
  bool evict_on_unlock = false;      ///< released while locked (eager)
  bool dead = false;                 ///< recycled: on the graph's free list
};

/// Owner of all graph records; ids index the vectors. Dead ids are reused
/// by the next add of their kind (a tensor run by an op of as many outputs).
class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const Op& op(OpId id) const { return ops_[id]; }
  const Tensor& tensor(TensorId id) const { return tensors_[id]; }
  const Storage& storage(StorageId id) const { return storages_[id]; }
  Op& op(OpId id) { return ops_[id]; }
  Tensor& tensor(TensorId id) { return tensors_[id]; }
  Storage& storage(StorageId id) { return storages_[id]; }
  /// Sizes of the id spaces (live and dead records).
  std::size_t op_count() const { return ops_.size(); }
  std::size_t tensor_count() const { return tensors_.size(); }
  std::size_t storage_count() const { return storages_.size(); }
  /// Records not on a free list; O(1).
  std::size_t live_op_count() const { return ops_.size() - free_ops_.size(); }
  std::size_t live_tensor_count() const {
    return tensors_.size() - free_tensor_count_;
  }
  std::size_t live_storage_count() const {
    return storages_.size() - free_storages_.size();
  }

  /// New empty records, reusing dead ids first. References to records are
  /// invalidated by the next add of that kind.
  OpId add_op();
  /// `count` consecutive tensors; returns the first id.
  TensorId add_tensors(std::uint32_t count);
  TensorId add_tensor() { return add_tensors(1); }
  StorageId add_storage();
  /// Puts dead records on the free lists (reset, capacity kept). The caller
  /// guarantees that no live record refers to them any more.
  void recycle_op(OpId id);
  /// A run made by one add_tensors(count).
  void recycle_tensors(TensorId first, std::uint32_t count);
  void recycle_storage(StorageId id);

  /// Pre-sizes the record vectors (a hint; the graph grows past it).
  void reserve(std::size_t ops, std::size_t tensors) {
    ops_.reserve(ops);
    tensors_.reserve(tensors);
    storages_.reserve(tensors);
  }

  /// Calls f(StorageId) for the storage of every input of every op that
  /// produced a tensor of `s` (the parents; may repeat, may include s).
  template <typename F>
  void for_each_parent_storage(StorageId s, F&& f) const {
    for (TensorId t : storages_[s].tensors) {
      for (TensorId in : ops_[tensors_[t].op].inputs) f(tensors_[in].storage);
    }
  }
  /// Calls f(StorageId) for the storage of every output of every op that
  /// read a tensor of `s` (the children; may repeat, may include s).
  template <typename F>
  void for_each_child_storage(StorageId s, F&& f) const {
    for (TensorId t : storages_[s].tensors) {
      for (OpId c : tensors_[t].consumers) {
        for (TensorId out : ops_[c].outputs) f(tensors_[out].storage);
      }
    }
  }

 private:
  std::pmr::unsynchronized_pool_resource arena_;  // before the records
  std::vector<Op> ops_;
  std::vector<Tensor> tensors_;
  std::vector<Storage> storages_;
  std::vector<OpId> free_ops_;
  std::vector<std::vector<TensorId>> free_tensor_runs_;  // by run length
  std::size_t free_tensor_count_ = 0;
  std::vector<StorageId> free_storages_;
};

}  // namespace dtr
