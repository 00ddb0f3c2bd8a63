#pragma once
/// Where each thread's backward passes stand, for the lineage cut at the
/// end of the outermost one (Note [Lineage cut], Note [Nested backward
/// passes]). Decisions only: the Context queues the engine's callback and
/// cuts; this says when.
#include <cstdint>
#include <optional>
#include <thread>
#include <unordered_map>

namespace dtr::pt {

class BackwardPasses {
 public:
  /// A cut is wanted at the end of `thread`'s current pass. Returns the
  /// generation of a callback to queue now, or nothing if one is queued.
  std::optional<std::uint64_t> want_cut(std::thread::id thread);
  /// The engine dropped callback `generation` unrun (a failed backward):
  /// the next want_cut() queues again.
  void callback_dropped(std::thread::id thread, std::uint64_t generation);
  /// A pass ended. True if the cut runs now; false if `thread` is inside a
  /// nested pass, whose outer pass takes the cut over.
  bool pass_ended(std::thread::id thread);
  void enter_nested(std::thread::id thread);
  /// True if the outermost nested region ended with a cut deferred to it:
  /// the caller wants a cut at the end of the enclosing pass.
  bool exit_nested(std::thread::id thread);

 private:
  struct State {
    bool cut_queued = false;  // a callback waits for the pass's end
    std::uint64_t generation = 0;
    int nested = 0;
    bool cut_deferred = false;
  };
  std::unordered_map<std::thread::id, State> threads_;
};

}  // namespace dtr::pt
