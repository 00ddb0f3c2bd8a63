#include "dtr/torch/auto_heuristic.h"

#include <chrono>
#include <cmath>

#include "dtr/core/error.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/sim/parallel.h"
#include "dtr/sim/simulator.h"

namespace dtr::pt {

void AutoHeuristic::set_enabled(bool on) {
  enabled_ = on;
  step_.restart(on);  // Note [Auto protocol]: the first step is written
}

void AutoHeuristic::end_step(Runtime& rt) {
  if (!enabled_ || step_.calls() == 0) return;
  // A choice holds for a graph shape at a budget: the budget the next step
  // runs under is part of the key (a changed budget decides again).
  const std::uint64_t signature =
      step_.signature() ^
      (static_cast<std::uint64_t>(rt.budget_bytes()) * 0x9e3779b97f4a7c15ull);
  auto known = choices_.find(signature);
  std::string choice;
  bool write_next = false;
  if (known != choices_.end()) {
    choice = known->second;
    // Written in the hope of a new shape: try again, a few times.
    if (step_.writing() && ++written_known_ < kMaxWrittenKnown) {
      write_next = true;
    }
  } else if (step_.writing()) {
    try {
      choice = decide(rt);
    } catch (const Error&) {
      // A step the simulator cannot replay (a bug to fix, not the user's
      // problem): keep training with the heuristic in force.
      choice = std::string(rt.heuristic().name());
    }
    remember(signature, choice);
  } else {
    write_next = true;  // a new shape: decide on the next step
    written_known_ = 0;
  }
  if (!choice.empty() && choice != rt.heuristic().name()) {
    rt.set_heuristic(make_heuristic(choice));
  }
  step_.restart(write_next);
}

// Simulates the written step at the runtime's budget with the paper's
// protocol, as `dtr sim --heuristic auto` does: a run that thrashes (2x) is
// no choice, and the limit bounds the time a decision takes (exact dtr and
// msps can take seconds to thrash through a step that all heuristics fail).
std::string AutoHeuristic::decide(Runtime& rt) {
  const auto start = std::chrono::steady_clock::now();
  const trace::Program program = step_.program();
  const sim::Baseline baseline = sim::compute_baseline(program);
  sim::SimConfig config;
  config.heuristic = std::string(sim::kAutoHeuristic);
  config.budget_bytes = rt.budget_bytes();
  const sim::SimResult r =
      sim::simulate_auto(program, baseline, config, sim::default_threads());
  ++decisions_;
  decision_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  // Nothing trains in simulation: keep what runs now.
  return r.chosen.empty() ? std::string(rt.heuristic().name()) : r.chosen;
}

void AutoHeuristic::remember(std::uint64_t signature,
                             const std::string& choice) {
  if (order_.size() == kMaxSignatures) {
    choices_.erase(order_.front());
    order_.pop_front();
  }
  choices_.emplace(signature, choice);
  order_.push_back(signature);
}

}  // namespace dtr::pt
