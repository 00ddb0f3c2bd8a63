#include "dtr/core/eviction_pool.h"

namespace dtr {

bool EvictionPool::insert(Graph& g, StorageId s) {
  Storage& st = g.storage(s);
  if (st.pool_slot != kNoId) return false;
  // Compact before growing so the slot vector stays within 2x the live set.
  if (slots_.size() >= 64 && slots_.size() >= 2 * live_) compact(g);
  st.pool_slot = static_cast<std::uint32_t>(slots_.size());
  st.pool_seq = next_seq_++;
  slots_.push_back(s);
  ++live_;
  bytes_ += st.bytes;
  return true;
}

bool EvictionPool::erase(Graph& g, StorageId s) {
  Storage& st = g.storage(s);
  if (st.pool_slot == kNoId) return false;
  slots_[st.pool_slot] = kNoId;
  st.pool_slot = kNoId;
  --live_;
  bytes_ -= st.bytes;
  if (live_ == 0) slots_.clear();
  return true;
}

void EvictionPool::compact(Graph& g) {
  std::size_t out = 0;
  for (StorageId s : slots_) {
    if (s == kNoId) continue;
    g.storage(s).pool_slot = static_cast<std::uint32_t>(out);
    slots_[out++] = s;
  }
  slots_.resize(out);
}

}  // namespace dtr
