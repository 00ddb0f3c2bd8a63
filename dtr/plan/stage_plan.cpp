#include "dtr/plan/stage_plan.h"

#include <algorithm>
#include <string>

#include "dtr/core/error.h"

namespace dtr::plan {

namespace {

// Stage t's computations given S[t] and what must be kept after it.
void fill_stage(const StaticGraph& g, StagePlan& p, std::size_t t) {
  std::vector<bool>& r = p.R[t];
  const std::vector<bool>& s = p.S[t];
  r.assign(g.size(), false);
  const NodeId last = frontier(p, t);
  if (advances(p, t)) r[last] = true;
  for (std::size_t i = last + std::size_t{1}; i-- > 0;) {
    if (!s[i] && kept_after(g, p, t, static_cast<NodeId>(i))) r[i] = true;
    if (!r[i]) continue;
    for (NodeId d : g.nodes[i].deps) {
      if (!s[d]) r[d] = true;
    }
  }
}

bool read_after(const StaticGraph& g, NodeId i, std::size_t t) {
  const std::vector<NodeId>& u = g.users[i];
  return !u.empty() && u.back() > t;
}

}  // namespace

void check_stages(const StaticGraph& g, const StagePlan& p) {
  const std::size_t stages = stage_count(p);
  auto fail = [&](const std::string& why) {
    throw InvalidArgument("[plan] a plan of " + std::to_string(stages) +
                          " stages for " + std::to_string(g.size()) +
                          " nodes: " + why);
  };
  if (p.R.size() != stages) fail("R and S have different stage counts");
  for (std::size_t t = 0; t < stages; ++t) {
    if (p.R[t].size() != g.size() || p.S[t].size() != g.size()) {
      fail("stage " + std::to_string(t) + " has rows of another length");
    }
  }
  if (p.frontier.empty()) {
    if (stages != g.size()) fail("one stage per node is expected");
    return;
  }
  if (p.frontier.size() != stages) fail("frontier has another length");
  if (stages == 0 || p.frontier[0] != 0) fail("frontier starts at 0");
  for (std::size_t t = 1; t < stages; ++t) {
    if (p.frontier[t] != p.frontier[t - 1] &&
        p.frontier[t] != p.frontier[t - 1] + 1) {
      fail("frontier jumps at stage " + std::to_string(t));
    }
  }
  if (p.frontier.back() + std::size_t{1} != g.size()) {
    fail("frontier ends before the last node");
  }
}

bool kept_after(const StaticGraph& g, const StagePlan& p, std::size_t t,
                NodeId i) {
  return t + 1 < stage_count(p) ? static_cast<bool>(p.S[t + 1][i])
                                : static_cast<bool>(g.outputs[i]);
}

void fill_compute_sets(const StaticGraph& g, StagePlan& p) {
  p.R.assign(stage_count(p), {});
  for (std::size_t t = 0; t < stage_count(p); ++t) fill_stage(g, p, t);
}

StagePlan plan_with_keep_rule(
    const StaticGraph& g,
    const std::function<bool(NodeId node, std::size_t stage)>& keep) {
  const std::size_t n = g.size();
  StagePlan p;
  p.R.assign(n, {});
  p.S.assign(n, std::vector<bool>(n, false));
  for (std::size_t t = 0; t < n; ++t) {
    // With S[t + 1] still empty this is the closure of t (and, in the last
    // stage, of the outputs); keeping only what it holds adds nothing to it.
    fill_stage(g, p, t);
    if (t + 1 == n) break;
    std::vector<bool>& next = p.S[t + 1];
    for (NodeId i = 0; i <= t; ++i) {
      bool in_memory = p.R[t][i] || p.S[t][i];
      next[i] =
          in_memory && (g.outputs[i] || read_after(g, i, t)) && keep(i, t);
    }
  }
  return p;
}

void tidy_plan(const StaticGraph& g, StagePlan& p) {
  const std::size_t n = g.size();
  std::vector<bool> read(n);
  for (std::size_t t = stage_count(p); t-- > 1;) {
    std::fill(read.begin(), read.end(), false);
    for (std::size_t k = 0; k <= frontier(p, t); ++k) {
      if (!p.R[t][k]) continue;
      for (NodeId d : g.nodes[k].deps) read[d] = true;
    }
    for (NodeId i = 0; i < known(p, t); ++i) {
      if (p.S[t][i] && !read[i] && !kept_after(g, p, t, i)) p.S[t][i] = false;
    }
  }
  fill_compute_sets(g, p);
}

Schedule schedule_from_stages(const StaticGraph& g, const StagePlan& p) {
  const std::size_t n = g.size();
  Schedule out;
  std::vector<bool> resident(n, false);
  std::vector<std::size_t> last_read(n);
  constexpr std::size_t kUnread = static_cast<std::size_t>(-1);
  for (std::size_t t = 0; t < stage_count(p); ++t) {
    out.stage_starts.push_back(out.steps.size());
    const std::vector<bool>& r = p.R[t];
    const NodeId last = frontier(p, t);
    std::fill(last_read.begin(), last_read.end(), kUnread);
    for (std::size_t k = 0; k <= last; ++k) {
      if (!r[k]) continue;
      for (NodeId d : g.nodes[k].deps) last_read[d] = k;
    }
    auto droppable = [&](NodeId i) {
      return resident[i] && !kept_after(g, p, t, i);
    };
    // Resident but neither read in this stage nor kept: free now.
    for (NodeId i = 0; i < n; ++i) {
      if (droppable(i) && last_read[i] == kUnread) {
        out.steps.push_back({StepKind::kFree, i});
        resident[i] = false;
      }
    }
    for (NodeId k = 0; k <= last; ++k) {
      if (!r[k]) continue;
      if (!resident[k]) {
        out.steps.push_back({StepKind::kCompute, k});
        resident[k] = true;
      }
      for (NodeId d : g.nodes[k].deps) {
        if (last_read[d] == k && droppable(d)) {
          out.steps.push_back({StepKind::kFree, d});
          resident[d] = false;
        }
      }
      if (last_read[k] == kUnread && droppable(k)) {
        out.steps.push_back({StepKind::kFree, k});
        resident[k] = false;
      }
    }
  }
  return out;
}

}  // namespace dtr::plan
