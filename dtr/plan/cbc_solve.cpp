#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <OsiClpSolverInterface.hpp>
#include <cmath>
#include <limits>

#include "dtr/plan/cbc_solve_impl.h"

namespace dtr::plan {

int LinearModel::add_col(double lb, double ub, double obj, bool integer) {
  col_lb_.push_back(lb);
  col_ub_.push_back(ub);
  obj_.push_back(obj);
  integer_.push_back(integer);
  return num_cols() - 1;
}

void LinearModel::add_row(const std::vector<int>& cols,
                          const std::vector<double>& coefs, char sense,
                          double rhs) {
  constexpr double kInf = std::numeric_limits<double>::max();
  const int row = num_rows();
  row_lb_.push_back(sense == 'L' ? -kInf : rhs);
  row_ub_.push_back(sense == 'G' ? kInf : rhs);
  for (std::size_t e = 0; e < cols.size(); ++e) {
    entries_.push_back({cols[e], row, coefs[e]});
  }
}

LinearModel::Columns LinearModel::columns() const {
  // A counting sort of the entries by column.
  Columns c;
  c.start.assign(obj_.size() + 1, 0);
  for (const Entry& e : entries_) ++c.start[e.col + 1];
  for (std::size_t col = 0; col < obj_.size(); ++col) {
    c.start[col + 1] += c.start[col];
  }
  std::vector<int> next(c.start.begin(), c.start.end() - 1);
  c.index.resize(entries_.size());
  c.value.resize(entries_.size());
  for (const Entry& e : entries_) {
    int at = next[e.col]++;
    c.index[at] = e.row;
    c.value[at] = e.coef;
  }
  return c;
}

namespace {

// "x<index>": CBC reads a MIP start by column name (its by-index form
// misplaces values in 2.10.8). Appended rather than "x" + ..., which trips
// gcc 12's -Wrestrict false positive.
std::string col_name(int col) {
  std::string name = "x";
  name += std::to_string(col);
  return name;
}

void load(const LinearModel& m, OsiClpSolverInterface& solver, bool named) {
  LinearModel::Columns c = m.columns();
  std::vector<CoinBigIndex> start(c.start.begin(), c.start.end());
  solver.loadProblem(m.num_cols(), m.num_rows(), start.data(), c.index.data(),
                     c.value.data(), m.col_lb().data(), m.col_ub().data(),
                     m.obj().data(), m.row_lb().data(), m.row_ub().data());
  for (int col = 0; col < m.num_cols(); ++col) {
    if (m.is_integer(col)) solver.setInteger(col);
    if (named) solver.setColName(col, col_name(col));
  }
}

// Clp's own wall-clock limit: CBC's time limit does not reach its root LP
// nor the LPs that complete a MIP start (15 s each on a 201-node chain).
void limit_lp(OsiSolverInterface* solver, const Deadline& deadline) {
  auto* clp = dynamic_cast<OsiClpSolverInterface*>(solver);
  if (clp != nullptr) {
    clp->getModelPtr()->setMaximumWallSeconds(deadline.seconds_left());
  }
}

SolverResult solve_lp(OsiClpSolverInterface& solver, const Deadline& deadline,
                      bool log) {
  solver.messageHandler()->setLogLevel(log ? 1 : 0);
  limit_lp(&solver, deadline);
  solver.initialSolve();
  SolverResult r;
  r.proven_optimal = solver.isProvenOptimal();
  r.proven_infeasible =
      solver.isProvenPrimalInfeasible() || solver.isProvenDualInfeasible();
  r.has_solution = r.proven_optimal;
  if (r.has_solution) {
    const double* x = solver.getColSolution();
    r.x.assign(x, x + solver.getNumCols());
    r.objective = r.lower_bound = solver.getObjValue();
  } else if (!r.proven_infeasible) {
    const int status = solver.getModelPtr()->status();
    r.out_of_time = status == 3 || deadline.passed();  // 3: a limit
    if (!r.out_of_time) {
      r.detail = "the LP stopped (Clp status " + std::to_string(status) + ")";
    }
  }
  return r;
}

void set_start(CbcModel& model, const SolverStart& start) {
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  names.reserve(start.cols.size());
  for (int c : start.cols) names.push_back(col_name(c));
  for (const std::string& name : names) name_ptrs.push_back(name.c_str());
  model.setMIPStart(static_cast<int>(start.cols.size()), name_ptrs.data(),
                    start.values.data());
}

SolverResult read_mip(CbcModel& model) {
  SolverResult r;
  r.proven_infeasible = model.isProvenInfeasible();
  r.proven_optimal = model.isProvenOptimal();
  const double* x = model.getColSolution();
  r.has_solution =
      x != nullptr && !r.proven_infeasible &&
      (model.numberSavedSolutions() > 0 || model.bestSolution() != nullptr);
  if (r.has_solution) {
    r.x.assign(x, x + model.getNumCols());
    r.objective = model.getObjValue();
  }
  // The search's bound holds without a solution of its own too (e.g. when
  // the MIP start is CBC's only incumbent after a restart).
  if (!r.proven_infeasible) {
    r.lower_bound =
        r.proven_optimal ? r.objective : model.getBestPossibleObjValue();
    // Before its root LP CBC knows no bound (it says -inf or +inf).
    if (!(std::abs(r.lower_bound) < 1e30)) r.lower_bound = 0;
  }
  r.out_of_time = model.isSecondsLimitReached();
  if (!r.has_solution && !r.proven_infeasible && !r.out_of_time) {
    r.detail = "the solver stopped without a solution (status " +
               std::to_string(model.status()) + ")";
  }
  return r;
}

SolverResult solve_mip(const OsiClpSolverInterface& solver,
                       const SolverStart* start, const Deadline& deadline,
                       bool log) {
  CbcModel model(solver);
  CbcSolverUsefulData data;
  CbcMain0(model, data);
  data.noPrinting_ = false;
  model.setLogLevel(log ? 1 : 0);
  limit_lp(model.solver(), deadline);
  if (start != nullptr) set_start(model, *start);
  model.setMaximumSeconds(deadline.seconds_left());
  // Wall clock, not CBC's default CPU time: a limit a user can wait for.
  // CBC's preprocessing ignores the time limit (a minute on 60 nodes): a
  // limit must hold, and a MIP start makes up for it.
  const char* argv[] = {"dtr", "-timeMode", "elapsed", "-preprocess",
                        "off", "-solve",    "-quit"};
  CbcMain1(static_cast<int>(std::size(argv)), argv, model, nullptr, data);
  SolverResult r = read_mip(model);
  if (deadline.passed() && !model.isSecondsLimitReached()) {
    // CBC says its search is over, but an LP stopped by Clp's limit ends a
    // node as if it were infeasible: after the deadline that is no proof,
    // and no bound.
    r.out_of_time = true;
    r.proven_optimal = false;
    r.proven_infeasible = false;
    r.lower_bound = 0;
  }
  return r;
}

}  // namespace

SolverResult solve_within(const LinearModel& model, const SolverStart* start,
                          const Deadline& deadline, bool log) {
  OsiClpSolverInterface solver;
  load(model, solver, /*named=*/start != nullptr);
  return model.relaxed() ? solve_lp(solver, deadline, log)
                         : solve_mip(solver, start, deadline, log);
}

}  // namespace dtr::plan
