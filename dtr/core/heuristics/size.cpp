#include "dtr/core/heuristics/size.h"

#include <limits>

namespace dtr {

double SizeHeuristic::key(const Graph& g, StorageId s) const {
  std::int64_t bytes = g.storage(s).bytes;
  return bytes > 0 ? 1.0 / static_cast<double>(bytes)
                   : std::numeric_limits<double>::infinity();
}

double SizeHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  return key(g, s);
}

}  // namespace dtr
