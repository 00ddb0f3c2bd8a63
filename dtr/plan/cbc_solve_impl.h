#pragma once
// A linear model collected in memory and solved with COIN-OR CBC (or Clp
// for the LP relaxation) within a deadline. Private to dtr_plan; only built
// with CBC.
#include <string>
#include <vector>

#include "dtr/plan/deadline.h"

namespace dtr::plan {

/// Columns and rows added one by one, handed to the solver in one piece
/// (O(entries) to load, where adding rows to a solver one at a time copies
/// its matrix on every row).
class LinearModel {
 public:
  int add_col(double lb, double ub, double obj, bool integer);
  int add_binary(double obj = 0) { return add_col(0, 1, obj, true); }
  /// sense: 'L' (<= rhs), 'G' (>= rhs) or 'E' (= rhs).
  void add_row(const std::vector<int>& cols, const std::vector<double>& coefs,
               char sense, double rhs);
  /// Every column continuous (the LP relaxation).
  void relax() { relaxed_ = true; }

  int num_cols() const { return static_cast<int>(obj_.size()); }
  int num_rows() const { return static_cast<int>(row_lb_.size()); }
  /// Integer, and not relaxed.
  bool is_integer(int col) const { return integer_[col] && !relaxed_; }
  bool relaxed() const { return relaxed_; }
  const std::vector<double>& col_lb() const { return col_lb_; }
  const std::vector<double>& col_ub() const { return col_ub_; }
  const std::vector<double>& obj() const { return obj_; }
  const std::vector<double>& row_lb() const { return row_lb_; }
  const std::vector<double>& row_ub() const { return row_ub_; }

  /// The matrix column by column (CSC: starts, row indices, values).
  struct Columns {
    std::vector<int> start, index;
    std::vector<double> value;
  };
  Columns columns() const;

 private:
  struct Entry {
    int col;
    int row;
    double coef;
  };
  bool relaxed_ = false;
  std::vector<double> col_lb_, col_ub_, obj_, row_lb_, row_ub_;
  std::vector<bool> integer_;
  std::vector<Entry> entries_;
};

/// Values of some integer columns to start the search from (a MIP start).
struct SolverStart {
  std::vector<int> cols;
  std::vector<double> values;
};

struct SolverResult {
  bool has_solution = false;
  bool proven_optimal = false;
  bool proven_infeasible = false;
  bool out_of_time = false;  ///< the deadline came before the solver ended
  std::vector<double> x;     ///< the solution, one value per column
  double objective = 0;
  double lower_bound = 0;  ///< the solver's bound, with or without a solution
  std::string detail;      ///< the solver's status when it stopped early
};

/// Solves `model` (minimizing) until the deadline: CBC's branch and bound,
/// or Clp alone for a relaxed model. Every LP and CBC's search are given
/// the time left. A search CBC reports finished after the deadline proves
/// nothing and gives no bound (an LP cut short by the limit may have pruned
/// it); lower_bound is then 0. `log` prints the solver's log on stdout.
SolverResult solve_within(const LinearModel& model, const SolverStart* start,
                          const Deadline& deadline, bool log);

}  // namespace dtr::plan
