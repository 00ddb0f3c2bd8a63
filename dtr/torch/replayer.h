#pragma once
/// The runtime's Executor for LibTorch: what a call records so that its
/// outputs can be recomputed (a Remat), and the replay itself. It reads
/// the live cells and rematerializers and the plain buffers lineage
/// captured; nothing else of the context.
#include <ATen/core/dispatch/Dispatcher.h>

#include <memory>

#include "dtr/core/executor.h"
#include "dtr/torch/accounting.h"
#include "dtr/torch/cell_table.h"
#include "dtr/torch/kernel_parts.h"
#include "dtr/torch/remat_table.h"
#include "dtr/torch/replay_check.h"
#include "dtr/torch/shared_buffers.h"

namespace dtr::pt {

class Replayer final : public Executor {
 public:
  /// Replays allocate inside an AllocationWindow with `make_room`, as the
  /// first run did.
  Replayer(CellTable& cells, RematTable& remats, SharedBuffers& shared,
           AllocationHook make_room)
      : cells_(cells),
        remats_(remats),
        shared_(shared),
        make_room_(make_room) {}

  /// Makes the Remat of a call that ran (op `op_id` in the runtime's graph,
  /// outputs `out_ids`) and gives it to `out_cells`.
  void record(const c10::OperatorHandle& op, OpId op_id, const Args& args,
              const MutationPlan& plan, const Slots& slots, const Outputs& out,
              const RngCapture& rng, const OutIds& out_ids,
              const OutCells& out_cells);
  /// DTR_CHECK_REPLAYS: compare every replay with the value it recomputes.
  void check_replays() { check_ = std::make_unique<ReplayCheck>(); }

  // Executor
  void replay(const Graph& graph, OpId op) override;
  void release_storage(const Graph& graph, StorageId s) override;

 private:
  CellTable& cells_;
  RematTable& remats_;
  SharedBuffers& shared_;
  AllocationHook make_room_;
  std::unique_ptr<ReplayCheck> check_;
};

}  // namespace dtr::pt
