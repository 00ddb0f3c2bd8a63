#include "dtr/core/heuristics/msps.h"

#include <limits>

#include "dtr/core/limits.h"

namespace dtr {

double MspsHeuristic::per_byte(std::int64_t compute_ns, std::int64_t bytes) {
  if (bytes <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(compute_ns) / static_cast<double>(bytes);
}

double MspsHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  if (st.bytes <= 0) return std::numeric_limits<double>::infinity();
  const Region& r = logged_.regions(g, s);
  audit(g, s, r.down_compute_ns, r.up_compute_ns);
  return per_byte(saturating_add(st.compute_ns, r.up_compute_ns), st.bytes);
}

StorageId MspsHeuristic::scan(const ChooseContext& ctx) {
  return scan_pool(ctx,
                   [&](StorageId s) { return score(ctx.graph, s, ctx.now); });
}

std::int64_t MspsHeuristic::cost_of(const Graph& g, StorageId s) {
  ++accesses_;
  WatchedRegions::Sums sums = watched_.exact_sums(g, s);
  audit(g, s, sums.down_compute_ns, sums.up_compute_ns);
  return saturating_add(g.storage(s).compute_ns, sums.up_compute_ns);
}

}  // namespace dtr
