#include "dtr/core/heuristics/simple.h"

#include <limits>

namespace dtr {

double DtrLocalHeuristic::score(const Graph& g, StorageId s,
                                std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  return cost_density(st.compute_ns, st.bytes, now - st.last_access);
}

StorageId KeyedHeuristic::choose(const ChooseContext& ctx) {
  // The prototype's sampling and size filter select among a subset: scan.
  if (ctx.sample_sqrt || ctx.min_bytes > 0) return Heuristic::choose(ctx);
  const Graph& g = ctx.graph;
  if (!active_ || heap_.size() > 4 * ctx.pool.size() + 1024) {
    rebuild(g, ctx.pool);
  }
  while (!heap_.empty()) {
    ++accesses_;
    const Entry& top = heap_.top();
    const Storage& st = g.storage(top.storage);
    if (ctx.pool.contains(g, top.storage) && st.pool_seq == top.seq &&
        key(g, top.storage) == top.key) {
      return top.storage;  // evicting it makes this entry stale
    }
    heap_.pop();
  }
  return kNoId;
}

void KeyedHeuristic::rebuild(const Graph& g, const EvictionPool& pool) {
  active_ = true;
  std::vector<Entry> entries;
  entries.reserve(pool.size());
  for (StorageId s : pool.slots()) {
    if (s != kNoId) entries.push_back({key(g, s), g.storage(s).pool_seq, s});
  }
  heap_ = std::priority_queue<Entry, std::vector<Entry>, Later>(
      Later{}, std::move(entries));
}

double LruHeuristic::key(const Graph& g, StorageId s) const {
  return static_cast<double>(g.storage(s).last_access);
}

StorageId DtrLocalHeuristic::choose(const ChooseContext& ctx) {
  return scan_pool(ctx, [&](StorageId s) {
    ++accesses_;
    const Storage& st = ctx.graph.storage(s);
    return cost_density(st.compute_ns, st.bytes, ctx.now - st.last_access);
  });
}

double LruHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  return key(g, s);
}

double SizeHeuristic::key(const Graph& g, StorageId s) const {
  std::int64_t bytes = g.storage(s).bytes;
  return bytes > 0 ? 1.0 / static_cast<double>(bytes)
                   : std::numeric_limits<double>::infinity();
}

double SizeHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  return key(g, s);
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
