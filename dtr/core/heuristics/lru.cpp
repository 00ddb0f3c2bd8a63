#include "dtr/core/heuristics/lru.h"

namespace dtr {

double LruHeuristic::key(const Graph& g, StorageId s) const {
  return static_cast<double>(g.storage(s).last_access);
}

double LruHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  return key(g, s);
}

}  // namespace dtr
