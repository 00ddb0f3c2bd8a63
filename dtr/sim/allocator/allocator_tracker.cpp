#include "dtr/sim/allocator/allocator_tracker.h"

#include "dtr/core/error.h"

namespace dtr::sim {

AllocatorTracker::AllocatorTracker(std::unique_ptr<AllocatorModel> model,
                                   RuntimeObserver* inner, bool check)
    : model_(std::move(model)), inner_(inner), check_(check) {}

void AllocatorTracker::note_reserved() {
  const std::int64_t reserved = model_->reserved_bytes();
  if (reserved > stats_.reserved_peak_bytes) {
    stats_.reserved_peak_bytes = reserved;
    stats_.live_at_reserved_peak = live_;
  }
  if (check_) {
    model_->check_invariants();
    DTR_ASSERT(reserved >= live_, "reserved ", reserved, " < live ", live_);
  }
}

// Zero-byte storages take no block (a real allocator returns no memory).
std::int64_t AllocatorTracker::place(std::int64_t bytes,
                                     std::int64_t clock_ns) {
  if (bytes == 0) return kNowhere;
  const AllocatorModel::Spot p = model_->place(bytes);
  live_ += bytes;
  if (!p.within_capacity) {
    if (stats_.failures++ == 0) {
      stats_.first_failure_clock_ns = clock_ns;
      stats_.first_failure_bytes = bytes;
    }
  }
  return p.addr;
}

void AllocatorTracker::release(std::int64_t addr, std::int64_t bytes) {
  if (addr == kNowhere) return;
  model_->release(addr);
  live_ -= bytes;
}

void AllocatorTracker::on_outputs_written(const Graph& g,
                                          std::span<const StorageId> fresh,
                                          std::int64_t duplicate_bytes,
                                          std::int64_t clock_ns) {
  for (StorageId s : fresh) {
    if (s >= addr_of_.size()) addr_of_.resize(s + 1, kNowhere);
    DTR_ASSERT(addr_of_[s] == kNowhere, "storage ", s, " placed twice");
    addr_of_[s] = place(g.storage(s).bytes, clock_ns);
  }
  // The duplicates live only while the op writes them: one block, gone
  // again before anything else is placed.
  const std::int64_t dup = place(duplicate_bytes, clock_ns);
  note_reserved();
  release(dup, duplicate_bytes);
  if (inner_) inner_->on_outputs_written(g, fresh, duplicate_bytes, clock_ns);
}

void AllocatorTracker::on_storage_freed(const Graph& g, StorageId s,
                                        std::int64_t clock_ns) {
  DTR_ASSERT(s < addr_of_.size(), "storage ", s, " freed but never placed");
  release(addr_of_[s], g.storage(s).bytes);
  addr_of_[s] = kNowhere;
  if (check_) note_reserved();
  if (inner_) inner_->on_storage_freed(g, s, clock_ns);
}

void AllocatorTracker::on_op_begin(std::int64_t clock_ns) {
  if (inner_) inner_->on_op_begin(clock_ns);
}
void AllocatorTracker::on_op_end(const Graph& g, OpId op, bool completed,
                                 std::int64_t clock_ns) {
  if (inner_) inner_->on_op_end(g, op, completed, clock_ns);
}
void AllocatorTracker::on_replay_begin(const Graph& g, TensorId t,
                                       std::int64_t clock_ns) {
  if (inner_) inner_->on_replay_begin(g, t, clock_ns);
}
void AllocatorTracker::on_replay_end(const Graph& g, TensorId t, bool completed,
                                     std::int64_t clock_ns) {
  if (inner_) inner_->on_replay_end(g, t, completed, clock_ns);
}
bool AllocatorTracker::wants_scores() const {
  return inner_ != nullptr && inner_->wants_scores();
}
void AllocatorTracker::on_evicted(const Graph& g, const EvictionEvent& event) {
  if (inner_) inner_->on_evicted(g, event);
}
void AllocatorTracker::on_memory_changed(std::int64_t bytes,
                                         std::int64_t clock_ns) {
  if (check_) {
    DTR_ASSERT(bytes == live_, "runtime holds ", bytes, " bytes, model ",
               live_);
  }
  if (inner_) inner_->on_memory_changed(bytes, clock_ns);
}

}  // namespace dtr::sim
