#pragma once
/// Allocator models for the simulator: where each resident storage would
/// sit in memory, and so how much memory a process really reserves for a
/// run whose live bytes stay within the budget (docs/allocators.md).
///
///   perfect   every freed byte serves any request: reserved = live (the
///             paper's assumption; no model runs).
///   best-fit  one heap: the smallest hole that fits, split; freed blocks
///             coalesce; the heap grows at its top when no hole fits.
///   caching   PyTorch's CUDA caching allocator: sizes rounded to 512 B,
///             small and large pools of segments, blocks split inside a
///             segment and never merged across segments; free segments stay
///             cached until a new one would pass the capacity.
///   arena     DTR's own arena (arena.h): best fit in one region of
///             exactly the budget; when no hole fits, the runtime evicts a
///             contiguous window. The only kind that steers eviction.
///
/// The other models observe, they do not steer: eviction still follows
/// the live budget. The capacity (the budget) is where a real allocator of that
/// size would have failed; a request that cannot be placed within it is
/// counted and placed beyond it, so the run goes on and is measured.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace dtr::sim {

enum class AllocatorKind { kPerfect, kBestFit, kCaching, kArena };

std::string_view to_string(AllocatorKind kind);
/// Throws dtr::InvalidArgument naming the accepted values.
AllocatorKind parse_allocator_kind(std::string_view name);

class AllocatorModel {
 public:
  struct Spot {
    std::int64_t addr = 0;
    bool within_capacity = true;  ///< false: a real allocator had failed
  };
  virtual ~AllocatorModel() = default;
  /// Places a live block of `bytes` (> 0).
  virtual Spot place(std::int64_t bytes) = 0;
  /// Frees the live block placed at `addr`.
  virtual void release(std::int64_t addr) = 0;
  /// Bytes taken from the device now (segments, or the heap's extent).
  virtual std::int64_t reserved_bytes() const = 0;
  /// Throws dtr::InternalError if the layout breaks an invariant: live
  /// blocks overlap, leave their segment, or free neighbours are unmerged.
  virtual void check_invariants() const = 0;
};

/// A model for `kind` (kBestFit or kCaching) with room for `capacity`
/// bytes.
std::unique_ptr<AllocatorModel> make_allocator_model(AllocatorKind kind,
                                                     std::int64_t capacity);

}  // namespace dtr::sim
