#pragma once
/// `auto` in the LibTorch layer: the heuristic the runtime uses is chosen by
/// simulating the program's own steps (dtr/sim/auto_choice.h).
///
/// Note [Auto protocol]
/// Each step (the operator calls between two Context::begin_step()) is
/// signed (Note [Step signatures]); a step that auto wants to decide on is
/// also written down. Choices are keyed by the signature and the budget in
/// force at the boundary. At the boundary that ends a step:
///  - a known signature: switch to the heuristic chosen for it (a step of
///    a static model pays only the signature);
///  - an unknown signature whose step was written: simulate it under each
///    fixed heuristic at the runtime's budget, switch to the cheapest that
///    trains (none trains: keep the current one), remember the choice;
///  - an unknown signature not written (a dynamic model changed shape):
///    write the next step, and decide on it; if that step has a known
///    shape after all (shapes alternate), write the next one too, up to
///    kMaxWrittenKnown steps in a row.
/// The first step is always written. The choice for a step is applied to
/// the steps after it: the next step is expected to look like the last.
/// Choices are kept for kMaxSignatures signatures, oldest dropped first.
/// Switching rebuilds the new heuristic's state (Note [Switching
/// heuristics]), so it is as if it had been there all along.
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

#include "dtr/core/runtime.h"
#include "dtr/torch/step_recording.h"

namespace dtr::pt {

class AutoHeuristic {
 public:
  static constexpr std::size_t kMaxSignatures = 64;
  static constexpr int kMaxWrittenKnown = 8;

  /// Off: the recording hooks do nothing (an explicit heuristic).
  void set_enabled(bool on);
  bool enabled() const { return enabled_; }
  /// The recording hooks; the caller checks enabled() first.
  StepRecording& step() { return step_; }
  /// A step boundary: decides and switches `rt` as the protocol says.
  void end_step(Runtime& rt);

  std::uint64_t decisions() const { return decisions_; }
  /// Wall time of all decisions (simulating the step under each heuristic).
  std::int64_t decision_ns() const { return decision_ns_; }

 private:
  std::string decide(Runtime& rt);
  void remember(std::uint64_t signature, const std::string& choice);

  bool enabled_ = false;
  StepRecording step_;
  std::unordered_map<std::uint64_t, std::string> choices_;
  std::deque<std::uint64_t> order_;  // signatures, oldest first
  int written_known_ = 0;  // written steps in a row that had known shapes
  std::uint64_t decisions_ = 0;
  std::int64_t decision_ns_ = 0;
};

}  // namespace dtr::pt
