#pragma once
/// Where the runtime's storages sit, for a runtime whose memory is one
/// region of fixed size (an arena): a request then needs a *hole* large
/// enough, not only enough free bytes in total. With a Placement set
/// (Runtime::set_placement), the runtime makes room by evicting the window
/// the placement chooses, and reports every storage it makes resident or
/// frees. Without one (the default) nothing changes.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dtr/core/graph.h"

namespace dtr {

class Placement {
 public:
  /// The cost of evicting resident storage `s` (lower is evicted first;
  /// +infinity: only if nothing else will do), or NaN if it cannot be
  /// evicted now (locked, pinned, constant).
  using EvictionCost = std::function<double(StorageId s)>;

  virtual ~Placement() = default;
  /// Whether a block of `bytes` fits a hole now.
  virtual bool fits(std::int64_t bytes) const = 0;
  /// Appends to `victims` the storages whose eviction opens a hole of at
  /// least `bytes`; false if no run of evictable or free blocks is that
  /// large.
  virtual bool choose_window(const Graph& graph, std::int64_t bytes,
                             const EvictionCost& cost,
                             std::vector<StorageId>& victims) = 0;
  /// An operator wrote its outputs (as RuntimeObserver::on_outputs_written).
  virtual void on_outputs_written(const Graph& graph,
                                  std::span<const StorageId> fresh,
                                  std::int64_t duplicate_bytes) = 0;
  /// Resident storage `s` left memory.
  virtual void on_storage_freed(const Graph& graph, StorageId s) = 0;
};

}  // namespace dtr
