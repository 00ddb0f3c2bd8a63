#include "dtr/core/heuristics/msps.h"

#include <limits>

#include "dtr/core/limits.h"

namespace dtr {

double MspsHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  if (st.bytes <= 0) return std::numeric_limits<double>::infinity();
  std::int64_t compute =
      saturating_add(st.compute_ns, regions_.up_compute(g, s));
  return static_cast<double>(compute) / static_cast<double>(st.bytes);
}

}  // namespace dtr
