// `dtr sweep`: the main job - every heuristic over a grid of budgets, on
// several traces, with a CSV and the paper's Figure 2 style plots; with
// --planners, static planners at the same budgets beside them (Figure 3).
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "dtr/cli/commands.h"
#include "dtr/cli/sweep_planners.h"
#include "dtr/cli/validators.h"
#include "dtr/core/dealloc_policy.h"
#include "dtr/core/heuristic_registry.h"
#include "dtr/report/sweep_report.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/sim/parallel.h"
#include "dtr/sim/sweep.h"

namespace dtr::cli {

namespace {
struct SweepOptions {
  std::vector<std::string> traces;
  std::string ratios = "1.0,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1";
  /// Empty: every heuristic auto considers (heuristic_registry.h).
  std::string heuristics;
  std::string planners;  ///< comma-separated; empty: none
  double time_limit_s = 10;
  std::string policy = "eager";
  double thrash_limit = 2.0;
  std::optional<int> threads;  ///< unset: every core
  std::string out = "out/sweep";
  bool no_plots = false;
  bool quiet = false;
  std::string allocator = "perfect";
};

// The summary a person reads first: per trace and heuristic, the lowest
// budget that still trained and its overhead; with an allocator model,
// also the lowest at which a real allocator of the budget's size held
// every request.
void print_summary(const sim::SweepOutput& out,
                   const std::vector<std::string>& heuristics,
                   bool must_place) {
  std::map<std::string, std::map<std::string, const sim::SimResult*>> best;
  std::vector<std::string> traces;
  for (const auto& c : out.cells) {
    if (!best.count(c.trace)) traces.push_back(c.trace);
    auto& slot = best[c.trace][c.result.heuristic];
    const bool placed = !must_place || c.result.allocator_ooms == 0;
    if (c.result.status == sim::SimStatus::kOk && placed &&
        (!slot || c.result.budget_ratio < slot->budget_ratio)) {
      slot = &c.result;
    }
  }
  std::printf("\nlowest budget ratio that trains%s (overhead there)\n%-28s",
              must_place ? " within an allocator of the budget" : "", "trace");
  for (const auto& h : heuristics) std::printf(" %16s", h.c_str());
  std::printf("\n");
  for (const auto& t : traces) {
    std::printf("%-28.28s", t.c_str());
    for (const auto& h : heuristics) {
      const sim::SimResult* r = best[t][h];
      if (r) {
        std::printf("      %.2f (%.2fx)", r->budget_ratio, r->overhead);
      } else {
        std::printf(" %16s", "none");
      }
    }
    std::printf("\n");
  }
}

void run(const SweepOptions& o) {
  sim::SweepRequest request;
  request.specs = o.traces;
  request.ratios = parse_ratio_list(o.ratios);
  request.heuristics = o.heuristics.empty()
                           ? sim::auto_candidates()
                           : parse_heuristic_list(o.heuristics);
  request.policy = parse_dealloc_policy(o.policy);
  request.thrash_limit = o.thrash_limit;
  request.allocator = sim::parse_allocator_kind(o.allocator);
  request.threads = o.threads.value_or(sim::default_threads());
  // Checked before anything runs: a typo costs no sweep.
  const std::vector<std::string> planners =
      o.planners.empty() ? std::vector<std::string>{}
                         : parse_planner_list(o.planners);
  sim::SweepOutput out = sim::run_sweep(
      request,
      [&](const sim::SweepCell& c, std::size_t done, std::size_t total) {
        if (o.quiet) return;
        std::fprintf(stderr, "[%zu/%zu] %-24.24s %-9s %.2f  %-6s %.3fx\n", done,
                     total, c.trace.c_str(), c.result.heuristic.c_str(),
                     c.result.budget_ratio,
                     std::string(sim::to_string(c.result.status)).c_str(),
                     c.result.overhead);
      });
  std::vector<std::string> columns = request.heuristics;
  if (!planners.empty()) {
    add_planner_cells(out, planners, o.time_limit_s);
    for (const auto& p : planners) columns.push_back(planner_cell_name(p));
  }
  // Written before anything is printed: a failure is then the only output.
  report::SweepFiles written;
  if (!o.out.empty()) written = report::write_sweep(out, o.out, !o.no_plots);
  print_summary(out, columns, /*must_place=*/false);
  if (request.allocator != sim::AllocatorKind::kPerfect) {
    print_summary(out, columns, /*must_place=*/true);
  }
  if (o.out.empty()) return;
  for (const auto& w : written.warnings) {
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  std::printf("\nwrote:\n");
  for (const auto& f : written.files) std::printf("  %s\n", f.c_str());
}
}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep",
      "Simulate every heuristic over a grid of budget ratios; write "
      "DIR/results.csv and one overhead-vs-budget PNG per trace");
  sub->add_option("traces", o->traces,
                  "trace files, model:NAME specs or a manifest .json "
                  "(default: every built-in model)");
  sub->add_option("--ratios", o->ratios,
                  "comma-separated budget ratios: positive finite numbers "
                  "whose product with each trace's peak fits in 64 bits "
                  "(else an error)");
  sub->add_option("--heuristics", o->heuristics,
                  "comma-separated heuristic names (auto: the best of the "
                  "others per cell), or all (default: " +
                      heuristic_list(/*auto_only=*/true) + ")");
  sub->add_option("--planners", o->planners,
                  "comma-separated static planners (milp, lp-round, "
                  "chen-sqrtn, chen-greedy, revolve, checkpoint-all) or all, "
                  "run at the same budgets; their cells are named plan:NAME");
  sub->add_option("--time-limit", o->time_limit_s,
                  "seconds per milp / lp-round solve (default 10)")
      ->check(real_in(1e-3, 1e6));
  sub->add_option("--policy", o->policy, "eager, ignore or banish");
  sub->add_option("--thrash-limit", o->thrash_limit,
                  "give up at this overhead, >= 1 (default 2.0; inf: never)");
  sub->add_option("--allocator", o->allocator,
                  "where storages are placed: perfect (default), best-fit, "
                  "caching or arena; see docs/allocators.md");
  sub->add_option("--threads", o->threads,
                  "worker threads (default: cores); results do not depend "
                  "on it")
      ->transform(integer_in(1, kMaxThreads));
  sub->add_option("--out", o->out, "output directory (default out/sweep)");
  sub->add_flag("--no-plots", o->no_plots, "write the CSV only");
  sub->add_flag("--quiet", o->quiet, "no per-run progress lines");
  sub->callback([o] { run(*o); });
}

}  // namespace dtr::cli
