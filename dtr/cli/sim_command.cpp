// `dtr sim TRACE --budget-ratio R`: one simulated run.
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "dtr/cli/commands.h"
#include "dtr/cli/sim_stage.h"
#include "dtr/cli/validators.h"
#include "dtr/core/dealloc_policy.h"
#include "dtr/core/error.h"
#include "dtr/core/heuristic.h"
#include "dtr/core/heuristic_registry.h"
#include "dtr/report/result_table.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/sim/parallel.h"
#include "dtr/sim/program_source.h"
#include "dtr/trace/output_file.h"
#include "dtr/trace/profile_recorder.h"

namespace dtr::cli {

namespace {
struct SimOptions {
  std::string trace;
  std::optional<double> budget_ratio;
  std::optional<std::int64_t> budget_bytes;
  std::string heuristic = "dtr";
  std::string policy = "eager";
  double thrash_limit = 2.0;
  bool sample_sqrt = false;
  bool ignore_small = false;
  std::uint64_t seed = 0;
  std::string choice = "index";
  bool json = false;
  std::string profile;  ///< Chrome trace of the run, timed by its clock
  bool stage = false;
  std::string allocator = "perfect";
};

// What the allocator model measured; nothing under the perfect one.
void print_allocator(const sim::SimResult& r) {
  if (r.allocator == sim::AllocatorKind::kPerfect) return;
  std::printf(
      "allocator %s: reserved peak %lld bytes (%.3f x live peak, %.3f x "
      "budget), fragmentation %.3f\n",
      std::string(sim::to_string(r.allocator)).c_str(),
      (long long)r.reserved_peak_bytes,
      r.peak_bytes > 0 ? double(r.reserved_peak_bytes) / double(r.peak_bytes)
                       : 0.0,
      r.budget_bytes > 0
          ? double(r.reserved_peak_bytes) / double(r.budget_bytes)
          : 0.0,
      r.fragmentation);
  if (r.allocator_ooms == 0) {
    std::printf("every request fits an allocator of the budget's size\n");
  } else {
    std::printf(
        "%llu requests would not fit an allocator of the budget's size "
        "(the first at clock %lld ns of %lld)\n",
        (unsigned long long)r.allocator_ooms,
        (long long)r.first_allocator_oom_ns, (long long)r.final_clock_ns);
  }
}

void print_result(const sim::NamedProgram& p, const sim::Baseline& baseline,
                  const sim::SimResult& r) {
  const std::string chosen =
      r.chosen.empty() ? "" : " (chosen " + r.chosen + ")";
  std::printf(
      "trace %s (%zu ops)\nheuristic %s%s, policy %s\n"
      "budget %lld bytes = %.3f x baseline peak %lld\n"
      "status %s\noverhead %.4f (model %.3f ms + remat %.3f ms)\n"
      "peak %lld bytes, %llu evictions, %llu eager evictions, %llu remats\n"
      "simulated in %.3f ms (choosing victims %.3f ms)\n",
      p.name.c_str(), p.program.trace_ops(), r.heuristic.c_str(),
      chosen.c_str(), std::string(to_string(r.policy)).c_str(),
      (long long)r.budget_bytes, r.budget_ratio, (long long)baseline.peak_bytes,
      std::string(sim::to_string(r.status)).c_str(), r.overhead,
      r.model_compute_ns / 1e6, r.remat_compute_ns / 1e6,
      (long long)r.peak_bytes, (unsigned long long)r.evictions,
      (unsigned long long)r.eager_evictions, (unsigned long long)r.remats,
      r.sim_wall_ns / 1e6, r.choose_wall_ns / 1e6);
  print_allocator(r);
  if (!r.message.empty()) std::printf("%s\n", r.message.c_str());
}

void run_sim(const SimOptions& o) {
  sim::SimConfig config;
  config.heuristic = o.heuristic;
  config.policy = parse_dealloc_policy(o.policy);
  config.budget_ratio = o.budget_ratio;
  config.budget_bytes = o.budget_bytes;
  if (!config.budget_ratio && !config.budget_bytes) {
    throw InvalidArgument("give --budget-ratio or --budget-bytes");
  }
  config.thrash_limit = o.thrash_limit;
  config.sample_sqrt = o.sample_sqrt;
  config.ignore_small = o.ignore_small;
  config.seed = o.seed;
  config.choice = parse_choice_mode(o.choice);
  config.allocator = sim::parse_allocator_kind(o.allocator);
  if (!o.profile.empty()) {
    trace::refuse_overwriting_inputs(o.profile, {o.trace}, "--profile");
  }
  sim::NamedProgram p = sim::load_program(o.trace);
  sim::Baseline baseline = sim::compute_baseline(p.program);
  if (o.stage) {
    run_sim_staged(p, baseline, config, o.json);
    return;
  }
  // Opened before the run, so an unwritable path fails at once.
  std::optional<trace::ProfileRecorder> profile;
  if (!o.profile.empty()) {
    profile.emplace(o.profile, trace::ProfileClock::kRuntime,
                    "dtr sim " + p.name + " (" + o.heuristic + ")");
    config.observer = &*profile;
  }
  // auto simulates every fixed heuristic: on all cores, as sweeps do.
  sim::SimResult r = config.heuristic == sim::kAutoHeuristic
                         ? sim::simulate_auto(p.program, baseline, config,
                                              sim::default_threads())
                         : sim::simulate(p.program, baseline, config);
  if (profile) {
    profile->counter("budget bytes", "budget_bytes", r.budget_bytes, 0);
    profile->counter("budget bytes", "budget_bytes", r.budget_bytes,
                     r.final_clock_ns);
    profile->close();  // a write error exits 1, naming the file
  }
  if (o.json) {
    std::cout << report::result_to_json(p.name, r).dump() << "\n";
  } else {
    print_result(p, baseline, r);
  }
  // Note [sim exit status]: a run that did not fit the budget (oom) or gave
  // up (thrash) is a result, printed above, and also a failure: exit 2, so
  // a script can tell it from success (0) and from bad input (1).
  if (r.status != sim::SimStatus::kOk) {
    throw RunFailed("[sim] status " + std::string(sim::to_string(r.status)) +
                    " at budget " + std::to_string(r.budget_bytes) +
                    " bytes: " + r.message);
  }
}
}  // namespace

void add_sim_command(CLI::App& app) {
  auto o = std::make_shared<SimOptions>();
  CLI::App* sub = app.add_subcommand(
      "sim", "Replay one trace (or model:NAME) under a memory budget");
  sub->footer(
      "exit status: 0 the run trained (status ok); 2 it did not (status oom "
      "or thrash; the result is still printed); 1 bad input, or output that "
      "could not be written");
  sub->add_option("trace", o->trace,
                  "trace file, or model:NAME[?batch=..&depth=..&seed=..]")
      ->required();
  add_budget_options(
      sub, o->budget_ratio, o->budget_bytes,
      "budget as a fraction of the baseline peak: a positive finite number "
      "whose product with the peak fits in 64 bits (else an error)");
  sub->add_option("--heuristic", o->heuristic,
                  heuristic_list() + ", or auto (the best of " +
                      heuristic_list(/*auto_only=*/true) +
                      " on this trace and budget); see `dtr heuristics`");
  sub->add_option("--policy", o->policy, "eager, ignore or banish");
  sub->add_option("--thrash-limit", o->thrash_limit,
                  "give up at this overhead, >= 1 (default 2.0; inf: never)");
  sub->add_flag("--sample-sqrt", o->sample_sqrt,
                "examine ~sqrt(n) candidates per eviction (prototype)");
  sub->add_flag("--ignore-small", o->ignore_small,
                "skip candidates under 1% of the mean size (prototype)");
  sub->add_option("--seed", o->seed, "seed for random choices")
      ->transform(integer_in<std::uint64_t>(
          0, std::numeric_limits<std::uint64_t>::max()));
  sub->add_option("--choice", o->choice,
                  "victim search: index (default), scan (the reference), "
                  "check (both; an internal error if they differ), "
                  "fast-scan (what the index falls back to under churn) or "
                  "check-fast-scan (it and the scan, compared)");
  sub->add_option("--allocator", o->allocator,
                  "where storages are placed: perfect (default: reserved = "
                  "live), best-fit or caching (PyTorch's CUDA caching "
                  "allocator), which only measure, or arena (one region of "
                  "the budget, contiguous windows evicted); see "
                  "docs/allocators.md");
  sub->add_flag("--json", o->json, "print one JSON object");
  sub->add_option("--profile", o->profile,
                  "write a Chrome trace of the run (chrome://tracing, "
                  "ui.perfetto.dev), timed by the simulated clock; see "
                  "docs/profiling.md");
  sub->add_flag("--stage", o->stage,
                "run online recording each step's evictions, then replay "
                "them with no search (and, with several steps, as a "
                "training loop); print both");
  sub->callback([o] { run_sim(*o); });
}

}  // namespace dtr::cli
