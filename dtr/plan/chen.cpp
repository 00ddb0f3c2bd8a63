#include "dtr/plan/chen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace dtr::plan {

std::vector<NodeId> forward_articulation_points(const StaticGraph& g) {
  const std::size_t n = g.size();
  std::vector<std::vector<NodeId>> adj(n);
  for (NodeId i = 0; i < n; ++i) {
    if (g.nodes[i].backward) continue;
    for (NodeId d : g.nodes[i].deps) {
      if (g.nodes[d].backward) continue;
      adj[i].push_back(d);
      adj[d].push_back(i);
    }
  }
  // Tarjan's low-link on an explicit stack (graphs can be deep chains).
  constexpr std::uint32_t kUnseen = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> order(n, kUnseen), low(n, 0);
  std::vector<NodeId> parent(n, 0);
  std::vector<bool> cut(n, false);
  std::uint32_t clock = 0;
  std::vector<std::pair<NodeId, std::size_t>> stack;  // node, next edge
  for (NodeId root = 0; root < n; ++root) {
    if (g.nodes[root].backward || order[root] != kUnseen) continue;
    order[root] = low[root] = clock++;
    std::size_t root_children = 0;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [v, e] = stack.back();
      if (e < adj[v].size()) {
        NodeId w = adj[v][e++];
        if (order[w] == kUnseen) {
          parent[w] = v;
          order[w] = low[w] = clock++;
          if (v == root) ++root_children;
          stack.push_back({w, 0});
        } else if (w != parent[v] || v == root) {
          low[v] = std::min(low[v], order[w]);
        }
        continue;
      }
      NodeId done = v;
      stack.pop_back();
      if (stack.empty()) break;
      NodeId p = stack.back().first;
      low[p] = std::min(low[p], low[done]);
      if (p != root && low[done] >= order[p]) cut[p] = true;
    }
    if (root_children > 1) cut[root] = true;
  }
  std::vector<NodeId> out;
  for (NodeId i = 0; i < n; ++i) {
    if (cut[i]) out.push_back(i);
  }
  return out;
}

std::vector<bool> chen_checkpoints(const StaticGraph& g, std::int64_t segment,
                                   bool count_nodes) {
  std::vector<bool> candidate(g.size(), false);
  for (NodeId a : forward_articulation_points(g)) candidate[a] = true;
  std::vector<bool> checkpoint(g.size(), false);
  std::int64_t since = 0;
  for (NodeId i = 0; i < g.size(); ++i) {
    if (g.nodes[i].backward) continue;
    since += count_nodes ? 1 : g.nodes[i].bytes;
    if (candidate[i] && since >= segment) {
      checkpoint[i] = true;
      since = 0;
    }
  }
  return checkpoint;
}

StagePlan chen_plan(const StaticGraph& g,
                    const std::vector<bool>& checkpoints) {
  // The last forward reader of each node: until then the forward pass
  // keeps it.
  std::vector<std::size_t> last_forward_read(g.size(), 0);
  for (NodeId i = 0; i < g.size(); ++i) {
    for (NodeId u : g.users[i]) {
      if (!g.nodes[u].backward) last_forward_read[i] = u;
    }
  }
  return plan_with_keep_rule(g, [&](NodeId i, std::size_t t) {
    return checkpoints[i] || g.nodes[i].backward || g.nodes[t].backward ||
           last_forward_read[i] > t;
  });
}

StagePlan chen_sqrtn_plan(const StaticGraph& g) {
  std::int64_t forward = 0;
  for (const Node& n : g.nodes) forward += n.backward ? 0 : 1;
  auto segment = static_cast<std::int64_t>(
      std::ceil(std::sqrt(static_cast<double>(forward))));
  return chen_plan(g, chen_checkpoints(g, std::max<std::int64_t>(segment, 1),
                                       /*count_nodes=*/true));
}

std::vector<std::int64_t> chen_greedy_segments(const StaticGraph& g) {
  std::int64_t smallest = std::numeric_limits<std::int64_t>::max();
  std::int64_t total = 0;
  for (const Node& n : g.nodes) {
    if (n.backward) continue;
    smallest = std::min(smallest, std::max<std::int64_t>(n.bytes, 1));
    total += n.bytes;
  }
  std::vector<std::int64_t> out;
  if (total == 0) return {std::numeric_limits<std::int64_t>::max()};
  constexpr int kSteps = 32;
  double ratio = std::pow(static_cast<double>(total) / smallest, 1.0 / kSteps);
  double b = static_cast<double>(smallest);
  for (int k = 0; k <= kSteps; ++k, b *= ratio) {
    auto v = static_cast<std::int64_t>(b);
    if (out.empty() || v > out.back()) out.push_back(v);
  }
  out.push_back(std::numeric_limits<std::int64_t>::max());  // no checkpoint
  return out;
}

}  // namespace dtr::plan
