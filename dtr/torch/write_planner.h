#pragma once
/// How an operator's in-place writes are carried out (Note [The boxed
/// kernel], step 1): for each written argument, whether its old value is
/// copied first, moved, written directly and held, or written through
/// views the program shares; and whether the lineage must be cut before.
/// It reads the graph, the live cells and rematerializers and the shared
/// buffers, and changes nothing itself: the one write that cannot wait
/// for the plan (a storage copy, Note [Storage copy-on-write]) is the
/// caller's, passed in.
#include <ATen/core/function_schema.h>
#include <c10/util/FunctionRef.h>

#include <string>

#include "dtr/core/graph.h"
#include "dtr/torch/cell_table.h"
#include "dtr/torch/kernel_parts.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/remat_table.h"
#include "dtr/torch/shared_buffers.h"

namespace dtr::pt {

/// How one write into a checkpointed value is carried out.
enum class Mutation {
  kCopyOnWrite,  ///< the old value stays for lineage; the write goes to a copy
  kMove,         ///< only the program reads it: written in its buffer, and
                 ///< the old value stays recomputable
  kDirect,       ///< written in place and held
  kSharedViews,  ///< the program's other views see the write: in place
  kShared,       ///< as kSharedViews, but lineage read the storage into
                 ///< another storage: the storage is copied first
};

class WritePlanner {
 public:
  WritePlanner(const Graph& graph, const CellTable& cells,
               const RematTable& remats, const SharedBuffers& shared)
      : graph_(graph), cells_(cells), remats_(remats), shared_(shared) {}

  /// The plan of one call. `copy_storage(member)` copies the storage of
  /// `member` and rebinds the program's views of it to the copy (a
  /// kShared write); `debug` prints each write's classification.
  MutationPlan plan(const c10::FunctionSchema& schema, const OpRules& rules,
                    const Args& args,
                    c10::function_ref<void(TensorId)> copy_storage,
                    bool debug) const;

  /// How a write into `cell` (the value behind `wrapper`) is carried out.
  Mutation classify(const at::Tensor& wrapper, const Cell& cell) const;
  /// Some live Remat reads a value of this storage (into any storage).
  bool lineage_reads_storage(TensorId member) const;
  /// The program reaches the buffer of `cell` without DTR (Note
  /// [Program-visible buffers]).
  bool program_visible(const Cell& cell) const;

 private:
  struct Call;  // the call being planned
  void plan_write(Call& call, const at::Tensor& t, bool hidden,
                  std::size_t arg) const;
  void plan_external_write(Call& call, const at::Tensor& t,
                           const Cell& cell) const;

  const Graph& graph_;
  const CellTable& cells_;
  const RematTable& remats_;
  const SharedBuffers& shared_;
};

}  // namespace dtr::pt
