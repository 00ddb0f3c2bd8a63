#include "dtr/plan/milp.h"

#include <coin/Cbc_C_Interface.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <numeric>

#include "dtr/core/error.h"

namespace dtr::plan {

// Note [Checkmate formulation]
// Stages t = 0..n-1; stage t computes node t for the first time (the
// frontier advances one node per stage), so R[t][i] exists for i <= t with
// R[t][t] = 1, and S[t][i] for i < t (S[0] is empty). Constraints:
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

// "x<index>": CBC reads a MIP start by column name. Appended rather than
// "x" + ..., which trips gcc 12's -Wrestrict false positive.
std::string col_name(int col) {
  std::string name = "x";
  name += std::to_string(col);
  return name;
}

struct CbcDeleter {
  void operator()(Cbc_Model* m) const { Cbc_deleteModel(m); }
};

class ModelBuilder {
 public:
  explicit ModelBuilder(bool relax) : model_(Cbc_newModel()), relax_(relax) {}
  int add_col(double lb, double ub, double obj, bool integer) {
    // Named: CBC reads a MIP start by name (its by-index form misplaces
    // values in 2.10.8).
    std::string name = col_name(cols_);
    Cbc_addCol(model_.get(), name.c_str(), lb, ub, obj,
               static_cast<char>(integer && !relax_), 0, nullptr, nullptr);
    return cols_++;
  }
  int add_binary(double obj = 0) { return add_col(0, 1, obj, true); }
  void add_row(const std::vector<int>& cols, const std::vector<double>& coefs,
               char sense, double rhs) {
    Cbc_addRow(model_.get(), "", static_cast<int>(cols.size()), cols.data(),
               coefs.data(), sense, rhs);
  }
  Cbc_Model* get() { return model_.get(); }

 private:
  std::unique_ptr<Cbc_Model, CbcDeleter> model_;
  bool relax_;
  int cols_ = 0;
};

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

// Gives CBC a plan's binaries as a starting solution: FREE follows from R
// and S (the product in Note [Checkmate formulation]), U is CBC's to derive.
// A start that breaks a constraint (its U may exceed the budget, since the
// MILP frees later than a schedule does) is discarded by CBC.
void set_start(const StaticGraph& g, const StagePlan& p,
               const std::vector<std::vector<int>>& R,
               const std::vector<std::vector<int>>& S,
               const std::vector<FreeVar>& frees, Cbc_Model* m) {
  const std::size_t n = g.size();
  std::vector<int> cols;
  std::vector<double> values;
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i <= t; ++i) {
      cols.push_back(R[t][i]);
      values.push_back(p.R[t][i] ? 1 : 0);
    }
    for (std::size_t i = 0; i < t; ++i) {
      cols.push_back(S[t][i]);
      values.push_back(p.S[t][i] ? 1 : 0);
    }
  }
  for (const FreeVar& f : frees) {
    bool free = p.R[f.t][f.k] && !kept_after(g, p, f.t, f.i);
    for (NodeId j : g.users[f.i]) {
      if (j > f.k && j <= f.t && p.R[f.t][j]) free = false;
    }
    cols.push_back(f.col);
    values.push_back(free ? 1 : 0);
  }
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  names.reserve(cols.size());
  for (int c : cols) names.push_back(col_name(c));
  for (const std::string& name : names) name_ptrs.push_back(name.c_str());
  Cbc_setMIPStart(m, static_cast<int>(cols.size()), name_ptrs.data(),
                  values.data());
}

}  // namespace

MilpSolution solve_checkmate(const StaticGraph& g, const MilpOptions& o) {
  const std::size_t n = g.size();
  if (n > kMaxMilpNodes) {
    throw InvalidArgument("[milp] the graph has " + std::to_string(n) +
                          " nodes; the MILP takes at most " +
                          std::to_string(kMaxMilpNodes) +
                          " (use chen-greedy or checkpoint-all)");
  }
  if (o.budget_bytes < 0) {
    throw InvalidArgument("[milp] budget " + std::to_string(o.budget_bytes) +
                          " bytes is negative");
  }
  MilpSolution out;
  if (n == 0) {
    out.has_solution = g.constant_bytes <= o.budget_bytes;
    out.status =
        out.has_solution ? PlanStatus::kOptimal : PlanStatus::kInfeasible;
    return out;
  }
  std::vector<std::int64_t> sizes{g.constant_bytes}, costs;
  for (const Node& node : g.nodes) {
    sizes.push_back(node.bytes);
    costs.push_back(node.cost_ns);
  }
  const auto mem_unit = static_cast<double>(gcd_of(sizes));
  const auto cost_unit = static_cast<double>(gcd_of(costs));
  auto mem = [&](std::int64_t bytes) { return bytes / mem_unit; };
  const double budget = std::floor(o.budget_bytes / mem_unit);

  ModelBuilder b(o.relax);
  // R[t][i] for i <= t, S[t][i] for i < t.
  std::vector<std::vector<int>> R(n), S(n);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i <= t; ++i) {
      double obj = g.nodes[i].cost_ns / cost_unit;
      R[t].push_back(i == t ? b.add_col(1, 1, obj, true) : b.add_binary(obj));
    }
    for (std::size_t i = 0; i < t; ++i) S[t].push_back(b.add_binary());
  }
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t j = 0; j <= t; ++j) {
      for (NodeId i : g.nodes[j].deps) {
        b.add_row({R[t][j], R[t][i], S[t][i]}, {1, -1, -1}, 'L', 0);
      }
    }
    if (t + 1 < n) {
      for (std::size_t i = 0; i <= t; ++i) {
        if (i < t) {
          b.add_row({S[t + 1][i], R[t][i], S[t][i]}, {1, -1, -1}, 'L', 0);
        } else {
          b.add_row({S[t + 1][i], R[t][i]}, {1, -1}, 'L', 0);
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!g.outputs[i]) continue;
    if (i + 1 == n) continue;  // R[n-1][n-1] = 1
    b.add_row({R[n - 1][i], S[n - 1][i]}, {1, 1}, 'G', 1);
  }
  // Memory, stage by stage.
  std::vector<FreeVar> frees;
  std::vector<int> cols;
  std::vector<double> coefs;
  for (std::size_t t = 0; t < n; ++t) {
    const bool last = t + 1 == n;
    int prev = -1;
    std::vector<std::pair<int, double>> freed;  // FREE col, bytes
    for (std::size_t k = 0; k <= t; ++k) {
      int u = b.add_col(0, budget, 0, false);
      cols = {u, R[t][k]};
      coefs = {1, -mem(g.nodes[k].bytes)};
      double rhs = 0;
      if (k == 0) {
        rhs = mem(g.constant_bytes);
        for (std::size_t i = 0; i < t; ++i) {
          cols.push_back(S[t][i]);
          coefs.push_back(-mem(g.nodes[i].bytes));
        }
      } else {
        cols.push_back(prev);
        coefs.push_back(-1);
        for (auto [f, bytes] : freed) {
          cols.push_back(f);
          coefs.push_back(bytes);
        }
      }
      b.add_row(cols, coefs, 'E', rhs);
      prev = u;
      // FREE[t][i][k] for i in deps(k) and i = k.
      freed.clear();
      std::vector<NodeId> candidates = g.nodes[k].deps;
      candidates.push_back(static_cast<NodeId>(k));
      for (NodeId i : candidates) {
        if (last && g.outputs[i]) continue;  // never freed: FREE = 0
        int f = b.add_binary();
        freed.push_back({f, mem(g.nodes[i].bytes)});
        frees.push_back(
            {f, static_cast<std::uint32_t>(t), i, static_cast<NodeId>(k)});
        // h = 1 - R[t][k] + S[t+1][i] + sum_{j in users(i), k < j <= t}
        // R[t][j]; constraints FREE + h >= 1 and kappa FREE + h <= kappa.
        cols = {f, R[t][k]};
        coefs = {1, -1};
        double kappa = 1;
        if (!last) {
          cols.push_back(S[t + 1][i]);
          coefs.push_back(1);
          kappa += 1;
        }
        for (NodeId j : g.users[i]) {
          if (j <= k || j > t) continue;
          cols.push_back(R[t][j]);
          coefs.push_back(1);
          kappa += 1;
        }
        b.add_row(cols, coefs, 'G', 0);  // FREE - R_k + rest >= 0
        coefs[0] = kappa;
        b.add_row(cols, coefs, 'L', kappa - 1);
      }
    }
  }
  Cbc_Model* m = b.get();
  Cbc_setLogLevel(m, getenv("DTR_MILP_LOG") ? 1 : 0);
  // Wall clock, not CBC's default CPU time: a limit a user can wait for.
  Cbc_setParameter(m, "timeMode", "elapsed");
  // CBC's preprocessing ignores the time limit (a minute on 60 nodes):
  // a limit must hold, and a MIP start makes up for it.
  Cbc_setParameter(m, "preprocess", "off");
  if (o.start != nullptr) set_start(g, *o.start, R, S, frees, m);
  Cbc_setMaximumSeconds(m, o.time_limit_s);
  Cbc_solve(m);
  const double* x = Cbc_getColSolution(m);
  bool proven_optimal = Cbc_isProvenOptimal(m) != 0;
  bool proven_infeasible = Cbc_isProvenInfeasible(m) != 0;
  bool solution = x != nullptr && !proven_infeasible &&
                  (o.relax ? proven_optimal
                           : Cbc_numberSavedSolutions(m) > 0 ||
                                 Cbc_bestSolution(m) != nullptr);
  if (proven_infeasible) {
    out.status = PlanStatus::kInfeasible;
    out.message = "no schedule fits " + std::to_string(o.budget_bytes) +
                  " bytes (proven)";
    return out;
  }
  if (!solution) {
    out.status = PlanStatus::kTimeLimit;
    out.message = Cbc_isSecondsLimitReached(m) || Cbc_status(m) == 1
                      ? "no schedule found within the time limit"
                      : "the solver stopped without a schedule (status " +
                            std::to_string(Cbc_status(m)) + ")";
    return out;
  }
  out.has_solution = true;
  out.status = proven_optimal ? PlanStatus::kOptimal : PlanStatus::kFeasible;
  out.objective_ns = Cbc_getObjValue(m) * cost_unit;
  out.lower_bound_ns = proven_optimal
                           ? out.objective_ns
                           : Cbc_getBestPossibleObjValue(m) * cost_unit;
  out.plan.R.assign(n, std::vector<bool>(n, false));
  out.plan.S.assign(n, std::vector<bool>(n, false));
  out.S.assign(n, std::vector<double>(n, 0.0));
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i <= t; ++i) out.plan.R[t][i] = x[R[t][i]] > 0.5;
    for (std::size_t i = 0; i < t; ++i) {
      out.S[t][i] = x[S[t][i]];
      out.plan.S[t][i] = x[S[t][i]] > 0.5;
    }
  }
  if (!proven_optimal) {
    out.message = Cbc_isSecondsLimitReached(m)
                      ? "time limit reached with a schedule"
                      : "stopped with a schedule";
  }
  return out;
}

}  // namespace dtr::plan
