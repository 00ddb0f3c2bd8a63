#include "dtr/core/heuristics/dtr_local.h"

namespace dtr {

double DtrLocalHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  return cost_density(st.compute_ns, st.bytes, now - st.last_access);
}

StorageId DtrLocalHeuristic::scan(const ChooseContext& ctx) {
  return scan_pool(ctx, [&](StorageId s) {
    ++accesses_;
    const Storage& st = ctx.graph.storage(s);
    return cost_density(st.compute_ns, st.bytes, ctx.now - st.last_access);
  });
}

}  // namespace dtr
