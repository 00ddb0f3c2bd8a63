#pragma once
/// Scoped profiling: while a Profile is alive, what the runtime does is
/// written to `path` as a Chrome trace (open it in chrome://tracing or
/// ui.perfetto.dev; docs/profiling.md), timed by the wall clock: a span per
/// kernel call on checkpointed tensors with its replays nested inside, an
/// instant per eviction (storage, bytes, score) and the counter tracks
/// "dtr bytes", "allocator bytes" and "held bytes". One profile at a time.
///
///   dtr::pt::Profile profile("step.json");   // throws if unwritable
///   train_step();
///   profile.close();   // throws dtr::Error naming the file on a failed write
#include <memory>
#include <string>

namespace dtr::pt {

class TorchProfiler;

class Profile {
 public:
  /// Starts profiling into `path`; throws dtr::Error naming it if it cannot
  /// be created, or if another profile is running.
  explicit Profile(std::string path);
  /// Stops profiling and closes the file (a write error is then lost:
  /// call close() to see it).
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;
  /// Stops profiling and finishes the file; throws dtr::Error naming it if
  /// anything could not be written. Idempotent.
  void close();

 private:
  std::unique_ptr<TorchProfiler> profiler_;
};

}  // namespace dtr::pt
