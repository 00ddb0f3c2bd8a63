#include "dtr/sim/allocator/allocator_model.h"

#include "dtr/core/error.h"
#include "dtr/sim/allocator/best_fit.h"
#include "dtr/sim/allocator/caching.h"

namespace dtr::sim {

std::string_view to_string(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kPerfect:
      return "perfect";
    case AllocatorKind::kBestFit:
      return "best-fit";
    case AllocatorKind::kCaching:
      return "caching";
    case AllocatorKind::kArena:
      return "arena";
  }
  return "?";
}

AllocatorKind parse_allocator_kind(std::string_view name) {
  for (AllocatorKind k : {AllocatorKind::kPerfect, AllocatorKind::kBestFit,
                          AllocatorKind::kCaching, AllocatorKind::kArena}) {
    if (name == to_string(k)) return k;
  }
  throw InvalidArgument(
      detail::concat("--allocator: unknown allocator model '", name,
                     "' (expected perfect, best-fit, caching or arena)"));
}

std::unique_ptr<AllocatorModel> make_allocator_model(AllocatorKind kind,
                                                     std::int64_t capacity) {
  switch (kind) {
    case AllocatorKind::kBestFit:
      return std::make_unique<BestFitModel>(capacity);
    case AllocatorKind::kCaching:
      return std::make_unique<CachingModel>(capacity);
    case AllocatorKind::kPerfect:
    case AllocatorKind::kArena:
      break;
  }
  throw InvalidArgument(detail::concat("[sim] allocator '", to_string(kind),
                                       "' is not an observing model"));
}

}  // namespace dtr::sim
