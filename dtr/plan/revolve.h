#pragma once
/// Griewank & Walther's binomial checkpointing (Revolve, ACM TOMS 2000) on
/// a graph whose forward pass is a chain: reversing l steps from a stored
/// state with c free slots, advance m steps, store that state, reverse the
/// last l - m steps with c - 1 slots, then the first m with c, choosing m
/// to minimize forward recomputation.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dtr/plan/stage_plan.h"

namespace dtr::plan {

/// Least forward steps recomputed to reverse `steps` steps of a chain with
/// `slots` checkpoints besides the start state, by dynamic programming over
/// the split: p(1, c) = 0, p(l, 0) = l(l - 1)/2, p(l, c) = min_m m +
/// p(l - m, c - 1) + p(m, c). O(steps^2 * slots).
std::int64_t revolve_recomputations(std::int64_t steps, std::int64_t slots);

/// The forward nodes of `g` as a chain f_0 .. f_{L-1}, each reading only the
/// previous one among forward nodes; nullopt and `why` when it is not one.
std::optional<std::vector<NodeId>> forward_chain(const StaticGraph& g,
                                                 std::string* why);

/// The Revolve plan with `slots` checkpoints for a graph with forward chain
/// `chain` (see forward_chain). State s is the input of step s (state 0 is
/// the chain's input, f_{s-1} otherwise); a backward node reverses the step
/// after the last forward node it reads.
StagePlan revolve_plan(const StaticGraph& g, const std::vector<NodeId>& chain,
                       std::int64_t slots);

}  // namespace dtr::plan
