#include "dtr/torch/backward_passes.h"

namespace dtr::pt {

std::optional<std::uint64_t> BackwardPasses::want_cut(std::thread::id thread) {
  State& s = threads_[thread];
  if (s.cut_queued) return std::nullopt;
  s.cut_queued = true;
  return ++s.generation;
}

void BackwardPasses::callback_dropped(std::thread::id thread,
                                      std::uint64_t generation) {
  State& s = threads_[thread];
  if (generation == s.generation) s.cut_queued = false;
}

bool BackwardPasses::pass_ended(std::thread::id thread) {
  State& s = threads_[thread];
  s.cut_queued = false;
  if (s.nested <= 0) return true;
  s.cut_deferred = true;
  return false;
}

void BackwardPasses::enter_nested(std::thread::id thread) {
  ++threads_[thread].nested;
}

bool BackwardPasses::exit_nested(std::thread::id thread) {
  State& s = threads_[thread];
  if (--s.nested != 0 || !s.cut_deferred) return false;
  s.cut_deferred = false;
  return true;
}

}  // namespace dtr::pt
