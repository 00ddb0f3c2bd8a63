#pragma once
/// The set of evictable storages, kept in the order they became evictable.
/// Order matters: heuristics scan it and break ties in favour of the later
/// entry, as the paper's simulator does, so results are reproducible.
/// Insert and erase are O(1) amortized; erased slots are compacted lazily.
#include <cstdint>
#include <vector>

#include "dtr/core/graph.h"

namespace dtr {

class EvictionPool {
 public:
  /// Adds s at the end (stamping Storage::pool_seq, which orders the pool);
  /// returns false if it was already present.
  bool insert(Graph& g, StorageId s);
  /// Removes s; returns false if it was not present.
  bool erase(Graph& g, StorageId s);
  bool contains(const Graph& g, StorageId s) const {
    return g.storage(s).pool_slot != kNoId;
  }
  std::size_t size() const { return live_; }
  /// Sum of the pooled storages' bytes (they do not change while pooled).
  std::int64_t bytes() const { return bytes_; }
  bool empty() const { return live_ == 0; }
  /// Slots in order; entries equal to kNoId are holes to skip.
  const std::vector<StorageId>& slots() const { return slots_; }
  /// Removes the holes (keeps order) so that slots() is dense.
  void compact(Graph& g);

 private:
  std::vector<StorageId> slots_;
  std::size_t live_ = 0;
  std::uint64_t next_seq_ = 1;
  std::int64_t bytes_ = 0;
};

}  // namespace dtr
