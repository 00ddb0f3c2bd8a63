#include "dtr/core/heuristics/dtr_eq.h"

#include <algorithm>

#include "dtr/core/limits.h"

namespace dtr {

std::uint32_t DtrEqHeuristic::find_root(std::uint32_t node) {
  std::uint32_t root = node;
  while (parent_[root] != root) {
    ++accesses_;
    root = parent_[root];
  }
  while (parent_[node] != root) {  // path compression
    std::uint32_t next = parent_[node];
    parent_[node] = root;
    node = next;
  }
  return root;
}

void DtrEqHeuristic::on_storage_created(const Graph& g, StorageId s) {
  if (node_of_.size() <= s) node_of_.resize(s + 1, kNoId);
}

void DtrEqHeuristic::neighbour_roots(const Graph& g, StorageId s) {
  roots_.clear();
  auto visit = [&](StorageId n) {
    ++accesses_;
    if (n == s || node_of_[n] == kNoId) return;
    const Storage& ns = g.storage(n);
    if (ns.resident || ns.banished) return;
    std::uint32_t root = find_root(node_of_[n]);
    if (root_mark_[root] != epoch_) {  // distinct classes only
      root_mark_[root] = epoch_;
      roots_.push_back(root);
    }
  };
  ++epoch_;
  g.for_each_parent_storage(s, visit);
  g.for_each_child_storage(s, visit);
}

void DtrEqHeuristic::on_evicted(const Graph& g, StorageId s) {
  IndexedHeuristic::on_evicted(g, s);
  // Compacting only once records are recycled keeps runs that never forget
  // identical to the reference, down to the metadata access counts.
  if (recycling_ && parent_.size() >= 2 * node_of_.size() + 1024) compact();
  std::uint32_t node = static_cast<std::uint32_t>(parent_.size());
  parent_.push_back(node);
  value_.push_back(g.storage(s).compute_ns);
  root_mark_.push_back(0);
  watchers_.emplace_back();
  neighbour_roots(g, s);
  node_of_[s] = node;
  std::uint32_t root = node;
  for (std::uint32_t r : roots_) {
    // Link the neighbour's root under ours and sum (no union by rank, as in
    // the reference; path compression keeps finds short).
    // Saturating: a class may hold many outputs of one costly op (each
    // storage's cost is bounded by limits.h, their sum is not).
    parent_[r] = root;
    value_[root] = saturating_add(value_[root], value_[r]);
    notify_watchers(r);
    std::vector<StorageId>().swap(watchers_[r]);  // never a root again
  }
  mark_neighbours_dirty(g, s);  // they now read the new class
}

void DtrEqHeuristic::detach(const Graph& g, StorageId s) {
  std::uint32_t node = node_of_[s];
  if (node == kNoId) return;  // never evicted since it was computed
  // Cannot overflow: each storage's cost is at most kMaxTotalCostNs, and a
  // value only drops by the costs of its own members.
  std::uint32_t root = find_root(node);
  value_[root] -= g.storage(s).compute_ns;
  node_of_[s] = kNoId;
  notify_watchers(root);
  mark_neighbours_dirty(g, s);  // s no longer counts as evicted for them
}

void DtrEqHeuristic::notify_watchers(std::uint32_t root) {
  for (StorageId w : watchers_[root]) mark_dirty(w);
  watchers_[root].clear();
}

void DtrEqHeuristic::mark_neighbours_dirty(const Graph& g, StorageId s) {
  if (!indexing()) return;
  auto mark = [&](StorageId n) { mark_dirty(n); };
  g.for_each_parent_storage(s, mark);
  g.for_each_child_storage(s, mark);
}

void DtrEqHeuristic::on_banished(const Graph& g, StorageId s) {
  IndexedHeuristic::on_banished(g, s);
  // A banished member stays in its class but no longer counts for its
  // neighbours (neighbour_roots skips it).
  if (node_of_[s] != kNoId) mark_neighbours_dirty(g, s);
}

void DtrEqHeuristic::on_op_recorded(const Graph& g, OpId op) {
  // New edges: the storages on either end may read other classes now.
  for (TensorId t : g.op(op).inputs) mark_dirty(g.tensor(t).storage);
  for (TensorId t : g.op(op).outputs) mark_dirty(g.tensor(t).storage);
}

void DtrEqHeuristic::on_materialized(const Graph& g,
                                     std::span<const StorageId> storages) {
  for (StorageId s : storages) {
    mark_dirty(s);
    detach(g, s);
  }
}

void DtrEqHeuristic::on_storage_recycled(const Graph& g, StorageId s) {
  IndexedHeuristic::on_storage_recycled(g, s);
  recycling_ = true;
  detach(g, s);
}

void DtrEqHeuristic::compact() {
  // Points every attached storage straight at one fresh node per class,
  // holding the class's value. No accesses are counted: this is upkeep.
  std::vector<std::uint32_t> new_node(parent_.size(), kNoId);
  std::vector<std::uint32_t> parent;
  std::vector<std::int64_t> value;
  for (std::uint32_t& node : node_of_) {
    if (node == kNoId) continue;
    std::uint32_t root = node;
    while (parent_[root] != root) root = parent_[root];
    if (new_node[root] == kNoId) {
      new_node[root] = static_cast<std::uint32_t>(parent.size());
      parent.push_back(new_node[root]);
      value.push_back(value_[root]);
    }
    node = new_node[root];
  }
  parent_.swap(parent);
  value_.swap(value);
  root_mark_.assign(parent_.size(), 0);
  // The node ids changed: drop every watcher list and rebuild the index
  // (and the lists) at the next search. Amortized over the evictions that
  // doubled the node arrays.
  watchers_.assign(parent_.size(), {});
  invalidate();
}

std::int64_t DtrEqHeuristic::neighbourhood_cost(const Graph& g, StorageId s) {
  std::int64_t compute = g.storage(s).compute_ns;
  neighbour_roots(g, s);
  for (std::uint32_t r : roots_) {
    compute = saturating_add(compute, value_[r]);
  }
  return compute;
}

double DtrEqHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  return cost_density(neighbourhood_cost(g, s), st.bytes, now - st.last_access);
}

std::int64_t DtrEqHeuristic::cost_of(const Graph& g, StorageId s) {
  ++accesses_;
  std::int64_t compute = neighbourhood_cost(g, s);
  for (std::uint32_t r : roots_) watchers_[r].push_back(s);
  return compute;
}

StorageId DtrEqHeuristic::scan(const ChooseContext& ctx) {
  return scan_pool(ctx,
                   [&](StorageId s) { return score(ctx.graph, s, ctx.now); });
}

}  // namespace dtr
