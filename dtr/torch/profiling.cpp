// dtr::pt::Profile (profiling.h): a trace::ProfileRecorder on the wall
// clock, installed as the runtime's observer, that also samples the
// allocator's bytes whenever DTR's resident bytes change.
#include "dtr/torch/profiling.h"

#include "dtr/core/error.h"
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/counting_allocator.h"
#include "dtr/trace/profile_recorder.h"

namespace dtr::pt {

class TorchProfiler : public trace::ProfileRecorder {
 public:
  explicit TorchProfiler(std::string path)
      : ProfileRecorder(std::move(path), trace::ProfileClock::kWall,
                        "dtr (LibTorch)") {}

  void on_memory_changed(std::int64_t bytes, std::int64_t clock_ns) override {
    ProfileRecorder::on_memory_changed(bytes, clock_ns);
    counter("allocator bytes", "allocator_bytes",
            cpu_accounting().counters().bytes);
  }
};

void Context::set_profiler(trace::ProfileRecorder* profiler) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(profiler == nullptr || profiler_ == nullptr,
            "[dtr] profile: a profile is already running");
  profiler_ = profiler;
  runtime_.set_observer(profiler);
}

// The kernel's span (kernel.cpp) holds the replays its begin_call made and
// the evictions its allocations caused; held bytes (an O(cells) sum) are
// sampled once per call.
void Context::end_op_span(const std::string& name) {
  if (profiler_ == nullptr) return;
  profiler_->end_span(name, "op");
  profiler_->counter("held bytes", "held_bytes", held_bytes());
  profiler_->counter("allocator bytes", "allocator_bytes",
                     accounting_.counters().bytes);
}

Profile::Profile(std::string path)
    : profiler_(std::make_unique<TorchProfiler>(std::move(path))) {
  Context::get().set_profiler(profiler_.get());
}

Profile::~Profile() {
  if (profiler_) Context::get().set_profiler(nullptr);
}

void Profile::close() {
  if (!profiler_) return;
  Context::get().set_profiler(nullptr);
  auto profiler = std::move(profiler_);
  profiler->close();
}

}  // namespace dtr::pt
