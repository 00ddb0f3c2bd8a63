#include "dtr/core/heuristics/simple.h"

#include <limits>

namespace dtr {

double DtrLocalHeuristic::score(const Graph& g, StorageId s,
                                std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  return cost_density(st.compute_ns, st.bytes, now - st.last_access);
}

double LruHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  return static_cast<double>(g.storage(s).last_access);
}

double SizeHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  std::int64_t bytes = g.storage(s).bytes;
  return bytes > 0 ? 1.0 / static_cast<double>(bytes)
                   : std::numeric_limits<double>::infinity();
}

double RandomHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  return 0.0;
}

StorageId RandomHeuristic::choose(const ChooseContext& ctx) {
  ++accesses_;
  if (ctx.pool.empty()) return kNoId;
  // Pick the k-th live slot; the pool is compacted lazily so skip holes.
  std::uniform_int_distribution<std::size_t> pick(0, ctx.pool.size() - 1);
  std::size_t k = pick(rng_);
  for (StorageId s : ctx.pool.slots()) {
    if (s == kNoId) continue;
    if (k-- == 0) return s;
  }
  return kNoId;
}

}  // namespace dtr
