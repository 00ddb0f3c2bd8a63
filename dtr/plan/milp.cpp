#include "dtr/plan/milp.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>

#include "dtr/core/error.h"
#include "dtr/plan/cbc_solve_impl.h"

namespace dtr::plan {

// Note [Checkmate formulation]
// Stages t = 0..n-1; stage t computes node t for the first time (the
// frontier advances one node per stage), so R[t][i] exists for i <= t with
// R[t][t] = 1, and S[t][i] for i < t (S[0] is empty). With a start that
// has recompute stages (Note [Recompute stages], stage_plan.h) the model
// has the start's stages: R[t][i] for i <= frontier(t), fixed to 1 for the
// new node of a stage that advances, S[t][i] for i < known(t); below, read
// "t" in a bound on i or j as frontier(t). Constraints:
//  - dependencies: R[t][j] <= R[t][i] + S[t][i] for every i in deps(j);
//  - keeping: S[t+1][i] <= R[t][i] + S[t][i];
//  - outputs: R[n-1][i] + S[n-1][i] >= 1 for every output i;
//  - memory: U[t][0] = constants + sum_i M_i S[t][i] + M_0 R[t][0], and
//    U[t][k] = U[t][k-1] + M_k R[t][k] - sum M_i FREE[t][i][k-1] over the
//    pairs (i, k-1) with i in deps(k-1) or i = k-1; U[t][k] <= budget;
//  - FREE[t][i][k] = R[t][k] * (1 - S[t+1][i]) * prod_{j in users(i),
//    k < j <= t} (1 - R[t][j]), linearized with the number of "hazards"
//    h = (1 - R[t][k]) + S[t+1][i] + sum R[t][j]: 1 - FREE <= h and
//    kappa (1 - FREE) >= h, kappa the number of terms of h. An output can
//    never be freed in the last stage.
// Objective: min sum_t sum_i cost_i R[t][i]. Bytes are divided by their
// GCD (the budget rounded down: every memory term is a multiple of it, so
// the constraint is unchanged) and costs by theirs, which keeps CBC's
// numbers small. The solution's R and S are rounded at 0.5 and replayed
// exactly (schedule_from_stages frees at least as early as FREE does), so
// no solver tolerance reaches a result.

namespace {

std::int64_t gcd_of(const std::vector<std::int64_t>& values) {
  std::int64_t g = 0;
  for (std::int64_t v : values) g = std::gcd(g, v);
  return g == 0 ? 1 : g;
}

// FREE[t][i][k] is column `col`.
struct FreeVar {
  int col;
  std::uint32_t t;
  NodeId i;
  NodeId k;
};

// A plan's binaries as a starting solution: FREE follows from R and S (the
// product in Note [Checkmate formulation]), U is the solver's to derive. A
// start that breaks a constraint (its U may exceed the budget, since the
// MILP frees later than a schedule does) is discarded by CBC.
SolverStart start_values(const StaticGraph& g, const StagePlan& p,
                         const std::vector<std::vector<int>>& R,
                         const std::vector<std::vector<int>>& S,
                         const std::vector<FreeVar>& frees) {
  SolverStart start;
  auto set = [&](int col, bool value) {
    start.cols.push_back(col);
    start.values.push_back(value ? 1 : 0);
  };
  for (std::size_t t = 0; t < stage_count(p); ++t) {
    for (std::size_t i = 0; i < R[t].size(); ++i) set(R[t][i], p.R[t][i]);
    for (std::size_t i = 0; i < S[t].size(); ++i) set(S[t][i], p.S[t][i]);
  }
  for (const FreeVar& f : frees) {
    bool free = p.R[f.t][f.k] && !kept_after(g, p, f.t, f.i);
    for (NodeId j : g.users[f.i]) {
      if (j > f.k && j <= frontier(p, f.t) && p.R[f.t][j]) free = false;
    }
    set(f.col, free);
  }
  return start;
}

// The model's columns, filled stage by stage; bytes and costs in the
// units of Note [Checkmate formulation].
struct Checkmate {
  Checkmate(const StaticGraph& graph, const MilpOptions& o);
  double mem(std::int64_t bytes) const { return bytes / mem_unit; }

  const StaticGraph& g;
  StagePlan stages;  // only the stages: frontier and its count
  LinearModel b;
  double mem_unit = 1;
  double cost_unit = 1;
  double budget = 0;
  std::vector<std::vector<int>> R, S;  // R[t][i], i <= t; S[t][i], i < t
  std::vector<FreeVar> frees;
};

Checkmate::Checkmate(const StaticGraph& graph, const MilpOptions& o)
    : g(graph) {
  if (o.relax) b.relax();
  std::vector<std::int64_t> sizes{g.constant_bytes}, costs;
  for (const Node& node : g.nodes) {
    sizes.push_back(node.bytes);
    costs.push_back(node.cost_ns);
  }
  mem_unit = static_cast<double>(gcd_of(sizes));
  cost_unit = static_cast<double>(gcd_of(costs));
  budget = std::floor(o.budget_bytes / mem_unit);
  if (o.start != nullptr) stages.frontier = o.start->frontier;
  const std::size_t count =
      stages.frontier.empty() ? g.size() : stages.frontier.size();
  stages.S.resize(count);
  R.resize(count);
  S.resize(count);
  for (std::size_t t = 0; t < count; ++t) {
    const NodeId last = frontier(stages, t);
    for (std::size_t i = 0; i <= last; ++i) {
      double obj = g.nodes[i].cost_ns / cost_unit;
      bool first = i == last && advances(stages, t);
      R[t].push_back(first ? b.add_col(1, 1, obj, true) : b.add_binary(obj));
    }
    for (std::size_t i = 0; i < known(stages, t); ++i) {
      S[t].push_back(b.add_binary());
    }
  }
}

// Dependencies of stage t, and what stage t + 1 may keep.
void add_order_rows(Checkmate& c, std::size_t t) {
  for (std::size_t j = 0; j < c.R[t].size(); ++j) {
    for (NodeId i : c.g.nodes[j].deps) {
      c.b.add_row({c.R[t][j], c.R[t][i], c.S[t][i]}, {1, -1, -1}, 'L', 0);
    }
  }
  if (t + 1 == c.R.size()) return;
  for (std::size_t i = 0; i < c.S[t + 1].size(); ++i) {
    if (i < c.S[t].size()) {
      c.b.add_row({c.S[t + 1][i], c.R[t][i], c.S[t][i]}, {1, -1, -1}, 'L', 0);
    } else {
      c.b.add_row({c.S[t + 1][i], c.R[t][i]}, {1, -1}, 'L', 0);
    }
  }
}

void add_output_rows(Checkmate& c) {
  const std::size_t last = c.R.size() - 1;
  for (std::size_t i = 0; i < c.g.size(); ++i) {
    if (!c.g.outputs[i]) continue;
    if (i < c.S[last].size()) {
      c.b.add_row({c.R[last][i], c.S[last][i]}, {1, 1}, 'G', 1);
    } else {
      c.b.add_row({c.R[last][i]}, {1}, 'G', 1);
    }
  }
}

// FREE[t][i][k] for i in deps(k) and i = k, with the rows that linearize
// it; returns each FREE column with the memory (in units) it frees.
std::vector<std::pair<int, double>> add_free_vars(Checkmate& c, std::size_t t,
                                                  std::size_t k) {
  const bool last = t + 1 == c.R.size();
  std::vector<std::pair<int, double>> freed;
  std::vector<NodeId> candidates = c.g.nodes[k].deps;
  candidates.push_back(static_cast<NodeId>(k));
  for (NodeId i : candidates) {
    if (last && c.g.outputs[i]) continue;  // never freed: FREE = 0
    int f = c.b.add_binary();
    freed.push_back({f, c.mem(c.g.nodes[i].bytes)});
    c.frees.push_back(
        {f, static_cast<std::uint32_t>(t), i, static_cast<NodeId>(k)});
    // h = 1 - R[t][k] + S[t+1][i] + sum_{j in users(i), k < j <= t}
    // R[t][j]; constraints FREE + h >= 1 and kappa FREE + h <= kappa.
    std::vector<int> cols{f, c.R[t][k]};
    std::vector<double> coefs{1, -1};
    if (!last) {
      cols.push_back(c.S[t + 1][i]);
      coefs.push_back(1);
    }
    for (NodeId j : c.g.users[i]) {
      if (j <= k || j >= c.R[t].size()) continue;
      cols.push_back(c.R[t][j]);
      coefs.push_back(1);
    }
    const auto kappa = static_cast<double>(cols.size() - 1);
    c.b.add_row(cols, coefs, 'G', 0);  // FREE - R_k + rest >= 0
    coefs[0] = kappa;
    c.b.add_row(cols, coefs, 'L', kappa - 1);
  }
  return freed;
}

// U[t][k] for k = 0..t: the memory in use right after node k is computed
// in stage t, bounded by the budget.
void add_memory_rows(Checkmate& c, std::size_t t) {
  const StaticGraph& g = c.g;
  int prev = -1;
  std::vector<std::pair<int, double>> freed;  // FREE col, units
  for (std::size_t k = 0; k < c.R[t].size(); ++k) {
    int u = c.b.add_col(0, c.budget, 0, false);
    std::vector<int> cols{u, c.R[t][k]};
    std::vector<double> coefs{1, -c.mem(g.nodes[k].bytes)};
    double rhs = 0;
    if (k == 0) {
      rhs = c.mem(g.constant_bytes);
      for (std::size_t i = 0; i < c.S[t].size(); ++i) {
        cols.push_back(c.S[t][i]);
        coefs.push_back(-c.mem(g.nodes[i].bytes));
      }
    } else {
      cols.push_back(prev);
      coefs.push_back(-1);
      for (auto [f, units] : freed) {
        cols.push_back(f);
        coefs.push_back(units);
      }
    }
    c.b.add_row(cols, coefs, 'E', rhs);
    prev = u;
    freed = add_free_vars(c, t, k);
  }
}

// False when the deadline passes before the model is complete.
bool build_rows(Checkmate& c, const Deadline& deadline) {
  const std::size_t stages = c.R.size();
  for (std::size_t t = 0; t < stages; ++t) {
    if (deadline.passed()) return false;
    add_order_rows(c, t);
  }
  add_output_rows(c);
  for (std::size_t t = 0; t < stages; ++t) {
    if (deadline.passed()) return false;
    add_memory_rows(c, t);
  }
  return !deadline.passed();
}

MilpSolution time_limit(std::string message) {
  MilpSolution out;
  out.status = PlanStatus::kTimeLimit;
  out.message = std::move(message);
  return out;
}

// What the costliest plan of the model computes: every node it may
// compute in every stage.
double most_compute(const Checkmate& c) {
  double total = 0;
  for (std::size_t t = 0; t < c.R.size(); ++t) {
    for (std::size_t i = 0; i < c.R[t].size(); ++i) {
      total += static_cast<double>(c.g.nodes[i].cost_ns);
    }
  }
  return total;
}

// The solver's answer as a status, with R and S rounded at 0.5.
MilpSolution read_solution(const Checkmate& c, const SolverResult& x,
                           const MilpOptions& o) {
  if (x.proven_infeasible) {
    MilpSolution out;
    out.status = PlanStatus::kInfeasible;
    out.message = "no schedule fits " + std::to_string(o.budget_bytes) +
                  " bytes (proven)";
    return out;
  }
  if (!x.has_solution) {
    MilpSolution out =
        time_limit(x.detail.empty() ? "no schedule found within the time limit"
                                    : x.detail);
    // A bound above what any plan of the model costs (CBC's cutoff when
    // nothing fits) says nothing about schedules: none is kept.
    const double bound = x.lower_bound * c.cost_unit;
    if (bound <= most_compute(c)) out.lower_bound_ns = std::max(0.0, bound);
    return out;
  }
  const std::size_t n = c.g.size();
  const std::size_t stages = c.R.size();
  MilpSolution out;
  out.has_solution = true;
  out.status = x.proven_optimal ? PlanStatus::kOptimal : PlanStatus::kFeasible;
  out.objective_ns = x.objective * c.cost_unit;
  out.lower_bound_ns = x.lower_bound * c.cost_unit;
  out.plan.frontier = c.stages.frontier;
  out.plan.R.assign(stages, std::vector<bool>(n, false));
  out.plan.S.assign(stages, std::vector<bool>(n, false));
  out.S.assign(stages, std::vector<double>(n, 0.0));
  for (std::size_t t = 0; t < stages; ++t) {
    for (std::size_t i = 0; i < c.R[t].size(); ++i) {
      out.plan.R[t][i] = x.x[c.R[t][i]] > 0.5;
    }
    for (std::size_t i = 0; i < c.S[t].size(); ++i) {
      out.S[t][i] = x.x[c.S[t][i]];
      out.plan.S[t][i] = x.x[c.S[t][i]] > 0.5;
    }
  }
  if (!x.proven_optimal) {
    out.message = x.out_of_time ? "time limit reached with a schedule"
                                : "stopped with a schedule";
  }
  return out;
}

void check_size(const StaticGraph& g, const MilpOptions& o) {
  if (g.size() > kMaxMilpNodes) {
    throw InvalidArgument("[milp] the graph has " + std::to_string(g.size()) +
                          " nodes; the MILP takes at most " +
                          std::to_string(kMaxMilpNodes) +
                          " (use chen-greedy or checkpoint-all)");
  }
  if (o.budget_bytes < 0) {
    throw InvalidArgument("[milp] budget " + std::to_string(o.budget_bytes) +
                          " bytes is negative");
  }
}

}  // namespace

bool milp_available() {
  return true;
}

MilpSolution solve_checkmate(const StaticGraph& g, const MilpOptions& o) {
  check_size(g, o);
  if (g.size() == 0) {
    MilpSolution out;
    out.has_solution = g.constant_bytes <= o.budget_bytes;
    out.status =
        out.has_solution ? PlanStatus::kOptimal : PlanStatus::kInfeasible;
    return out;
  }
  Checkmate c(g, o);
  if (!build_rows(c, o.deadline)) {
    return time_limit("the time limit came while building the model");
  }
  std::optional<SolverStart> start;
  if (o.start != nullptr) {
    start = start_values(g, *o.start, c.R, c.S, c.frees);
  }
  SolverResult x = solve_within(c.b, start ? &*start : nullptr, o.deadline,
                                getenv("DTR_MILP_LOG") != nullptr);
  return read_solution(c, x, o);
}

}  // namespace dtr::plan
