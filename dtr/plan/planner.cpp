#include "dtr/plan/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "dtr/core/error.h"
#include "dtr/plan/chen.h"
#include "dtr/plan/deadline.h"
#include "dtr/plan/lp_round.h"
#include "dtr/plan/milp.h"
#include "dtr/plan/revolve.h"
#include "dtr/plan/stage_plan.h"

namespace dtr::plan {

std::string_view to_string(PlanStatus status) {
  switch (status) {
    case PlanStatus::kOptimal:
      return "optimal";
    case PlanStatus::kFeasible:
      return "feasible";
    case PlanStatus::kInfeasible:
      return "infeasible";
    case PlanStatus::kTimeLimit:
      return "time-limit";
    case PlanStatus::kOverBudget:
      return "over-budget";
    case PlanStatus::kUnsupported:
      return "unsupported";
    case PlanStatus::kTooLarge:
      return "too-large";
  }
  return "?";
}

const std::vector<std::string>& planner_names() {
  static const std::vector<std::string> kNames{"milp",       "lp-round",
                                               "chen-sqrtn", "chen-greedy",
                                               "revolve",    "checkpoint-all"};
  return kNames;
}

bool PlanResult::consistent() const {
  bool claims =
      status == PlanStatus::kOptimal || status == PlanStatus::kFeasible;
  if (!claims) return true;
  return validation.ok && runtime.ok &&
         validation.peak_bytes == runtime.peak_bytes &&
         validation.compute_ns == runtime.compute_ns;
}

namespace {

// One candidate schedule, checked against the budget.
struct Candidate {
  StagePlan plan;
  Schedule schedule;
  Validation validation;
  std::string planner;
};

Candidate check(const StaticGraph& g, StagePlan p, std::int64_t budget,
                std::string planner = {}) {
  Candidate c;
  c.planner = std::move(planner);
  c.schedule = schedule_from_stages(g, p);
  c.plan = std::move(p);
  c.validation = validate_schedule(g, c.schedule, budget);
  if (!c.validation.ok) {
    // Over the budget (or broken): measure it without a limit, to report.
    Validation unbounded = validate_schedule(
        g, c.schedule, std::numeric_limits<std::int64_t>::max());
    c.validation.peak_bytes = unbounded.peak_bytes;
    c.validation.compute_ns = unbounded.compute_ns;
  }
  return c;
}

// Keeps the cheapest candidate within the budget, else the smallest peak.
class Best {
 public:
  void offer(Candidate c) {
    if (!have_ || better(c)) {
      best_ = std::move(c);
      have_ = true;
    }
  }
  bool have() const { return have_; }
  Candidate& get() { return best_; }

 private:
  bool better(const Candidate& c) const {
    const Validation& a = c.validation;
    const Validation& b = best_.validation;
    if (a.ok != b.ok) return a.ok;
    if (a.ok) return a.compute_ns < b.compute_ns;
    return a.peak_bytes < b.peak_bytes;
  }
  Candidate best_;
  bool have_ = false;
};

void take(PlanResult& r, Candidate c) {
  r.schedule = std::move(c.schedule);
  r.status = c.validation.ok ? PlanStatus::kFeasible : PlanStatus::kOverBudget;
  if (!c.validation.ok) r.message = c.validation.problem;
}

void plan_fixed(const StaticGraph& g, const StagePlan& p, PlanResult& r) {
  take(r, check(g, p, r.budget_bytes));
}

void offer_chen_greedy(const StaticGraph& g, std::int64_t budget, Best& best) {
  for (std::int64_t segment : chen_greedy_segments(g)) {
    best.offer(check(g, chen_plan(g, chen_checkpoints(g, segment, false)),
                     budget, "chen-greedy"));
  }
}

// False (and `why`) when the forward pass is not a chain.
bool offer_revolve(const StaticGraph& g, std::int64_t budget, Best& best,
                   std::string* why) {
  std::optional<std::vector<NodeId>> chain = forward_chain(g, why);
  if (!chain) return false;
  // More slots never cost more compute: take the most that fit.
  for (auto slots = static_cast<std::int64_t>(chain->size()); slots >= 0;
       --slots) {
    Candidate c = check(g, revolve_plan(g, *chain, slots), budget, "revolve");
    bool ok = c.validation.ok;
    best.offer(std::move(c));
    if (ok) break;
  }
  return true;
}

StagePlan checkpoint_all_plan(const StaticGraph& g) {
  return plan_with_keep_rule(g, [](NodeId, std::size_t) { return true; });
}

void plan_chen_greedy(const StaticGraph& g, PlanResult& r) {
  Best best;
  offer_chen_greedy(g, r.budget_bytes, best);
  take(r, std::move(best.get()));
}

void plan_revolve(const StaticGraph& g, PlanResult& r) {
  std::string why;
  Best best;
  if (!offer_revolve(g, r.budget_bytes, best, &why)) {
    r.status = PlanStatus::kUnsupported;
    r.message = why;
    return;
  }
  take(r, std::move(best.get()));
}

// The MILP's start: the cheapest plan within the budget among the given
// ones (DTR runs) and the fixed-rule ones. The families are tried cheapest
// first and none is begun after the deadline: the start is part of the
// time the MILP is given.
std::optional<Candidate> best_start(const StaticGraph& g,
                                    const PlanConfig& config,
                                    const Deadline& deadline) {
  const std::int64_t budget = config.budget_bytes;
  Best best;
  best.offer(check(g, checkpoint_all_plan(g), budget, "checkpoint-all"));
  if (config.starts != nullptr) {
    for (const NamedPlan& p : *config.starts) {
      check_stages(g, p.plan);
      // The model grows with stages x nodes: no larger than a frontier
      // model of the most nodes it takes.
      if (stage_count(p.plan) * g.size() > kMaxMilpNodes * kMaxMilpNodes) {
        continue;
      }
      StagePlan tidy = p.plan;
      tidy_plan(g, tidy);
      best.offer(check(g, std::move(tidy), budget, p.name));
    }
  }
  if (!deadline.passed()) {
    best.offer(check(g, chen_sqrtn_plan(g), budget, "chen-sqrtn"));
  }
  if (!deadline.passed()) offer_chen_greedy(g, budget, best);
  if (!deadline.passed()) offer_revolve(g, budget, best, nullptr);
  if (!best.get().validation.ok) return std::nullopt;
  tidy_plan(g, best.get().plan);
  return std::move(best.get());
}

// False (with the status and why) when the MILP cannot run on `g`.
bool milp_applies(const StaticGraph& g, PlanResult& r) {
  if (!milp_available()) {
    r.status = PlanStatus::kUnsupported;
    r.message =
        "dtr was built without COIN-OR CBC: install coinor-libcbc-dev and "
        "configure with -DDTR_WITH_CBC=ON";
    return false;
  }
  if (g.size() > kMaxMilpNodes) {
    r.status = PlanStatus::kTooLarge;
    r.message = "the graph has " + std::to_string(g.size()) +
                " nodes; the MILP takes at most " +
                std::to_string(kMaxMilpNodes) +
                " (use chen-greedy or checkpoint-all)";
    return false;
  }
  return true;
}

MilpSolution solve(const StaticGraph& g, const PlanConfig& config,
                   const Deadline& deadline, bool relax,
                   const StagePlan* start) {
  return solve_checkmate(g, {.budget_bytes = config.budget_bytes,
                             .deadline = deadline,
                             .relax = relax,
                             .start = start});
}

// The limit came before the solver had a schedule of its own: its start is
// the best one known and fits, so a cut-short MILP is never worse than the
// plans it starts from. The bound stays the solver's (at least the trace's
// own compute: every node is computed once).
void take_start(Candidate start, PlanResult& r) {
  r.schedule = std::move(start.schedule);
  r.status = PlanStatus::kFeasible;
  r.message = "the time limit came before the solver improved on its start";
}

// Whether the solver's schedule in `r` is over the budget or costs more
// than the start (CBC may drop a start, or round away from it).
bool costs_more(const StaticGraph& g, const PlanResult& r,
                const Validation& start) {
  Validation v = validate_schedule(g, r.schedule, r.budget_bytes);
  return !v.ok || v.compute_ns > start.compute_ns;
}

// The start beats what the solver returned: it is the answer, with the
// solver's bound (valid whatever schedule is reported).
void keep_start(Candidate start, PlanResult& r) {
  r.schedule = std::move(start.schedule);
  if (r.status == PlanStatus::kOptimal) r.status = PlanStatus::kFeasible;
  r.message += std::string(r.message.empty() ? "" : "; ") +
               "the start costs less than the solver's schedule";
}

void plan_milp(const StaticGraph& g, const PlanConfig& config,
               const Deadline& deadline, PlanResult& r) {
  if (!milp_applies(g, r)) {
    // Too large for the model: every node computed once is still a bound.
    if (r.status == PlanStatus::kTooLarge) {
      r.lower_bound_ns = static_cast<double>(g.baseline_cost_ns());
    }
    return;
  }
  std::optional<Candidate> start = best_start(g, config, deadline);
  MilpSolution s =
      solve(g, config, deadline, false, start ? &start->plan : nullptr);
  r.status = s.status;
  r.message = s.message;
  r.lower_bound_ns = std::max(s.lower_bound_ns + g.fixed_cost_ns,
                              static_cast<double>(g.baseline_cost_ns()));
  if (s.has_solution) r.schedule = schedule_from_stages(g, s.plan);
  if (!start) return;
  const std::string from = start->planner + " (" +
                           std::to_string(start->validation.compute_ns) +
                           " ns)";
  if (s.status == PlanStatus::kTimeLimit) {
    take_start(*std::move(start), r);
  } else if (s.has_solution && costs_more(g, r, start->validation)) {
    keep_start(*std::move(start), r);
  }
  r.message +=
      std::string(r.message.empty() ? "" : "; ") + "started from " + from;
}

void plan_lp_round(const StaticGraph& g, const PlanConfig& config,
                   const Deadline& deadline, PlanResult& r) {
  if (!milp_applies(g, r)) return;
  MilpSolution s = solve(g, config, deadline, true, nullptr);
  r.status = s.status;
  r.message = s.message;
  r.lower_bound_ns = s.lower_bound_ns + g.fixed_cost_ns;
  if (!s.has_solution) return;
  Best best;
  for (double threshold : lp_round_thresholds()) {
    best.offer(
        check(g, round_stage_plan(g, s.S, threshold), config.budget_bytes));
  }
  take(r, std::move(best.get()));
}

}  // namespace

void check_planner_name(const std::string& name) {
  const std::vector<std::string>& names = planner_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("[plan] unknown planner '" + name +
                        "' (known: " + known + ")");
}

PlanResult run_planner(const StaticGraph& g, const PlanConfig& config) {
  if (config.budget_bytes < 0) {
    throw InvalidArgument("[plan] budget " +
                          std::to_string(config.budget_bytes) +
                          " bytes is negative");
  }
  if (!(config.time_limit_s > 0) || !std::isfinite(config.time_limit_s)) {
    throw InvalidArgument("[plan] time limit " +
                          std::to_string(config.time_limit_s) +
                          " s is not a positive finite number");
  }
  PlanResult r;
  r.planner = config.planner;
  r.budget_bytes = config.budget_bytes;
  auto start = std::chrono::steady_clock::now();
  const Deadline deadline(config.time_limit_s);
  const std::string& name = config.planner;
  if (name == "milp") {
    plan_milp(g, config, deadline, r);
  } else if (name == "lp-round") {
    plan_lp_round(g, config, deadline, r);
  } else if (name == "chen-sqrtn") {
    plan_fixed(g, chen_sqrtn_plan(g), r);
  } else if (name == "chen-greedy") {
    plan_chen_greedy(g, r);
  } else if (name == "revolve") {
    plan_revolve(g, r);
  } else if (name == "checkpoint-all") {
    plan_fixed(g, checkpoint_all_plan(g), r);
  } else {
    check_planner_name(name);
  }
  r.solve_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  bool claims = r.status == PlanStatus::kOptimal ||
                r.status == PlanStatus::kFeasible ||
                r.status == PlanStatus::kOverBudget;
  if (claims) {
    r.validation = validate_schedule(g, r.schedule, config.budget_bytes);
    r.runtime = execute_on_runtime(g, r.schedule, config.budget_bytes);
    Validation unbounded = validate_schedule(
        g, r.schedule, std::numeric_limits<std::int64_t>::max());
    r.compute_ns = unbounded.compute_ns;
    r.peak_bytes = unbounded.peak_bytes;
    if (r.status == PlanStatus::kOptimal || r.status == PlanStatus::kFeasible) {
      // A bound above a schedule found is no bound on it.
      r.lower_bound_ns =
          std::min(r.lower_bound_ns, static_cast<double>(r.compute_ns));
      if (r.lower_bound_ns > 0 && r.compute_ns > 0) {
        r.gap = std::max(0.0, (r.compute_ns - r.lower_bound_ns) /
                                  static_cast<double>(r.compute_ns));
      }
    }
  }
  return r;
}

}  // namespace dtr::plan
