#include "dtr/core/heuristics/dtr.h"

namespace dtr {

double DtrExactHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  const Region& r = logged_.regions(g, s);
  audit(g, s, r.down_compute_ns, r.up_compute_ns);
  return cost_density(region_cost(st, r.down_compute_ns, r.up_compute_ns),
                      st.bytes, now - st.last_access);
}

StorageId DtrExactHeuristic::scan(const ChooseContext& ctx) {
  return scan_pool(ctx,
                   [&](StorageId s) { return score(ctx.graph, s, ctx.now); });
}

std::int64_t DtrExactHeuristic::cost_of(const Graph& g, StorageId s) {
  ++accesses_;
  WatchedRegions::Sums sums = watched_.exact_sums(g, s);
  audit(g, s, sums.down_compute_ns, sums.up_compute_ns);
  return region_cost(g.storage(s), sums.down_compute_ns, sums.up_compute_ns);
}

}  // namespace dtr
