#include "dtr/plan/revolve.h"

#include <algorithm>
#include <limits>

namespace dtr::plan {

namespace {

// p[l][c] and the best split, for l <= steps, c <= slots.
struct RevolveTable {
  std::vector<std::vector<std::int64_t>> cost;
  std::vector<std::vector<std::int64_t>> split;
};

RevolveTable revolve_table(std::int64_t steps, std::int64_t slots) {
  RevolveTable t;
  t.cost.assign(steps + 1, std::vector<std::int64_t>(slots + 1, 0));
  t.split.assign(steps + 1, std::vector<std::int64_t>(slots + 1, 0));
  for (std::int64_t l = 2; l <= steps; ++l) {
    t.cost[l][0] = l * (l - 1) / 2;
    for (std::int64_t c = 1; c <= slots; ++c) {
      std::int64_t best = std::numeric_limits<std::int64_t>::max();
      for (std::int64_t m = 1; m < l; ++m) {
        std::int64_t v = m + t.cost[l - m][c - 1] + t.cost[m][c];
        if (v < best) {
          best = v;
          t.split[l][c] = m;
        }
      }
      t.cost[l][c] = best;
    }
  }
  return t;
}

// held[s]: the states stored while step s is reversed.
void record_held(const RevolveTable& t, std::int64_t a, std::int64_t b,
                 std::int64_t c, std::vector<std::int64_t>& stored,
                 std::vector<std::vector<std::int64_t>>& held) {
  if (b - a == 1) {
    held[a] = stored;
    return;
  }
  if (c == 0) {
    for (std::int64_t s = a; s < b; ++s) held[s] = stored;
    return;
  }
  std::int64_t m = t.split[b - a][c];
  stored.push_back(a + m);
  record_held(t, a + m, b, c - 1, stored, held);
  stored.pop_back();
  record_held(t, a, a + m, c, stored, held);
}

}  // namespace

std::int64_t revolve_recomputations(std::int64_t steps, std::int64_t slots) {
  if (steps <= 1) return 0;
  slots = std::min(slots, steps);
  return revolve_table(steps, slots).cost[steps][slots];
}

std::optional<std::vector<NodeId>> forward_chain(const StaticGraph& g,
                                                 std::string* why) {
  std::vector<NodeId> chain;
  for (NodeId i = 0; i < g.size(); ++i) {
    if (g.nodes[i].backward) continue;
    std::vector<NodeId> forward_deps;
    for (NodeId d : g.nodes[i].deps) {
      if (!g.nodes[d].backward) forward_deps.push_back(d);
    }
    bool ok = chain.empty()
                  ? forward_deps.empty()
                  : forward_deps.size() == 1 && forward_deps[0] == chain.back();
    if (!ok) {
      if (why) {
        *why = "the forward pass is not a chain: node " + std::to_string(i) +
               " ('" + g.nodes[i].name + "') reads " +
               std::to_string(forward_deps.size()) + " forward nodes";
      }
      return std::nullopt;
    }
    chain.push_back(i);
  }
  return chain;
}

StagePlan revolve_plan(const StaticGraph& g, const std::vector<NodeId>& chain,
                       std::int64_t slots) {
  const auto steps = static_cast<std::int64_t>(chain.size());
  slots = std::clamp<std::int64_t>(slots, 0, std::max<std::int64_t>(steps, 1));
  RevolveTable table = revolve_table(steps, slots);
  std::vector<std::vector<std::int64_t>> held(steps);
  std::vector<std::int64_t> stored;
  if (steps > 0) {
    record_held(table, 0, steps, slots, stored, held);
    // The sweep ends holding the last step's input (Revolve reverses that
    // step from the state in hand) and the chain's output, which the
    // backward pass reads first (the loss); neither takes a slot.
    held[steps - 1].push_back(steps - 1);
    held[steps - 1].push_back(steps);
  }
  // state(i) for forward nodes, step(t) for backward stages.
  std::vector<std::int64_t> state(g.size(), -1);
  for (std::size_t k = 0; k < chain.size(); ++k) state[chain[k]] = k + 1;
  std::vector<std::int64_t> step(g.size(), steps - 1);
  std::int64_t current = steps - 1;
  for (NodeId t = 0; t < g.size(); ++t) {
    if (!g.nodes[t].backward) continue;
    std::int64_t read = -1;
    for (NodeId d : g.nodes[t].deps) read = std::max(read, state[d]);
    if (read >= 0) current = std::min<std::int64_t>(read, steps - 1);
    step[t] = current;
  }
  std::vector<std::size_t> next_backward(g.size() + 1, g.size());
  for (std::size_t t = g.size(); t-- > 0;) {
    next_backward[t] = g.nodes[t].backward ? t : next_backward[t + 1];
  }
  std::vector<std::size_t> last_forward_read(g.size(), 0);
  for (NodeId i = 0; i < g.size(); ++i) {
    for (NodeId u : g.users[i]) {
      if (!g.nodes[u].backward) last_forward_read[i] = u;
    }
  }
  auto is_held = [&](std::int64_t s, std::int64_t at_step) {
    if (at_step < 0 || at_step >= steps) return false;
    const std::vector<std::int64_t>& h = held[at_step];
    return std::find(h.begin(), h.end(), s) != h.end();
  };
  return plan_with_keep_rule(g, [&](NodeId i, std::size_t t) {
    if (g.nodes[i].backward || state[i] < 0) return true;
    if (t + 1 < g.size() && !g.nodes[t + 1].backward) {
      // The first sweep keeps the next step's input and what it stores.
      return last_forward_read[i] > t || is_held(state[i], steps - 1);
    }
    std::size_t nb = next_backward[t + 1];
    if (nb >= g.size()) return false;
    return is_held(state[i], step[nb]);
  });
}

}  // namespace dtr::plan
