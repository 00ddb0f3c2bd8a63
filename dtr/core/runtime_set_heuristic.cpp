#include "dtr/core/error.h"
#include "dtr/core/runtime.h"

namespace dtr {

// Note [Switching heuristics]
// `auto` (dtr/torch/auto_heuristic.h) changes the heuristic between training
// steps. A heuristic's state is whatever its hooks built from the runtime's
// history; the new one is shown a history that ends in the same graph:
// every live storage created, every live op recorded, every evicted storage
// evicted, every storage freed for good banished, then the pool in its
// order. The heuristics whose state is a function of the graph (dtr, msps:
// regions recomputed from the graph; lru, size: a heap of the pool;
// dtr-local, random: none) then choose exactly as if they had been there
// all along. dtr-eq's union-find classes are history: replaying the
// evictions gives each connected group of evicted storages one class, which
// is what its history gives unless a rematerialization left a phantom link
// (Note [Union-find split approximation]); after one its choices may differ,
// as two dtr-eq runs with different pasts may.
void Runtime::set_heuristic(std::unique_ptr<Heuristic> heuristic) {
  DTR_CHECK(heuristic != nullptr, "[runtime] set_heuristic: null heuristic");
  DTR_CHECK(!busy_ && frames_.empty(),
            "[runtime] set_heuristic while an op is replayed");
  Heuristic& h = *heuristic;
  const std::size_t storages = graph_.storage_count();
  for (StorageId s = 0; s < storages; ++s) {
    if (!graph_.storage(s).dead) h.on_storage_created(graph_, s);
  }
  for (OpId op = 0; op < graph_.op_count(); ++op) {
    if (!graph_.op(op).dead) h.on_op_recorded(graph_, op);
  }
  for (StorageId s = 0; s < storages; ++s) {
    const Storage& st = graph_.storage(s);
    if (st.dead) continue;
    if (st.banished) {
      h.on_banished(graph_, s);
    } else if (st.computed && !st.resident && !st.constant) {
      h.on_evicted(graph_, s);
    }
  }
  for (StorageId s : pool_.slots()) {
    if (s != kNoId) h.on_pool_insert(graph_, s);
  }
  heuristic_ = std::move(heuristic);
}

}  // namespace dtr
