// Built without COIN-OR CBC (-DDTR_WITH_CBC=OFF): milp and lp-round say how
// to get them.
#include "dtr/core/error.h"
#include "dtr/plan/milp.h"

namespace dtr::plan {

bool milp_available() {
  return false;
}

MilpSolution solve_checkmate(const StaticGraph&, const MilpOptions&) {
  throw InvalidArgument(
      "[milp] dtr was built without COIN-OR CBC: install coinor-libcbc-dev "
      "and configure with -DDTR_WITH_CBC=ON");
}

}  // namespace dtr::plan
