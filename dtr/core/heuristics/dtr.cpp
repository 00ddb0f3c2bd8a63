#include "dtr/core/heuristics/dtr.h"

#include "dtr/core/limits.h"

namespace dtr {

double DtrExactHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  std::int64_t compute =
      saturating_add(saturating_add(st.compute_ns, regions_.down_compute(g, s)),
                     regions_.up_compute(g, s));
  return cost_density(compute, st.bytes, now - st.last_access);
}

StorageId DtrExactHeuristic::scan(const ChooseContext& ctx) {
  return scan_pool(ctx,
                   [&](StorageId s) { return score(ctx.graph, s, ctx.now); });
}

std::int64_t DtrExactHeuristic::cost_of(const Graph& g, StorageId s) {
  ++accesses_;
  EvictedRegions::Sums sums = regions_.watched(g, s);
  return saturating_add(
      saturating_add(g.storage(s).compute_ns, sums.down_compute_ns),
      sums.up_compute_ns);
}

}  // namespace dtr
