#pragma once
/// Values that can no longer be recomputed, because something they were
/// computed from was written in place: they are held (resident and locked
/// in the runtime until they die) and lose their rematerializer. Carries
/// out what WritePlanner planned for a write: a direct write's holds, a
/// lineage cut, a storage's copy-on-write.
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>

#include "dtr/core/runtime.h"
#include "dtr/torch/accounting.h"
#include "dtr/torch/cell_table.h"
#include "dtr/torch/kernel_parts.h"
#include "dtr/torch/release_queue.h"
#include "dtr/torch/remat_table.h"
#include "dtr/torch/run_listeners.h"

namespace dtr::pt {

class Holds {
 public:
  /// The copy of a storage allocates inside an AllocationWindow with
  /// `make_room`; `debug` prints what each lineage cut holds.
  Holds(Runtime& runtime, CellTable& cells, const RematTable& remats,
        ReleaseQueue& releases, RunListeners& listeners,
        AllocationHook make_room, bool debug)
      : runtime_(runtime),
        cells_(cells),
        remats_(remats),
        releases_(releases),
        listeners_(listeners),
        make_room_(make_room),
        debug_(debug) {}

  /// `cell` stays resident until it dies and is never recomputed.
  void hold(const std::shared_ptr<Cell>& cell);
  /// After a direct write: every written value, and every live value
  /// sharing a written storage.
  void hold_written(const Args& args, const MutationPlan& plan);
  /// Note [Lineage cut]: the values of `owner` (every thread's if none).
  void cut_lineage(std::optional<std::thread::id> owner = std::nullopt);
  /// Note [Storage copy-on-write]: the storage of `member` is copied and
  /// the program's views of it move to the copy.
  void copy_storage_on_write(TensorId member);
  std::uint64_t lineage_cuts() const { return lineage_cuts_; }

 private:
  /// Makes `cell` resident, locks it in the runtime and marks it held; its
  /// rematerializer is the caller's to drop.
  void pin(Cell& cell);
  Runtime& runtime_;
  CellTable& cells_;
  const RematTable& remats_;
  ReleaseQueue& releases_;
  RunListeners& listeners_;
  AllocationHook make_room_;
  bool debug_;
  std::uint64_t lineage_cuts_ = 0;
};

}  // namespace dtr::pt
