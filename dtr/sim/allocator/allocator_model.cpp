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
  }
  return "?";
}

AllocatorKind parse_allocator_kind(std::string_view name) {
  for (AllocatorKind k : {AllocatorKind::kPerfect, AllocatorKind::kBestFit,
                          AllocatorKind::kCaching}) {
    if (name == to_string(k)) return k;
  }
  throw InvalidArgument(
      detail::concat("--allocator: unknown allocator model '", name,
                     "' (expected perfect, best-fit or caching)"));
}

std::unique_ptr<AllocatorModel> make_allocator_model(AllocatorKind kind,
                                                     std::int64_t capacity) {
  switch (kind) {
    case AllocatorKind::kBestFit:
      return std::make_unique<BestFitModel>(capacity);
    case AllocatorKind::kCaching:
      return std::make_unique<CachingModel>(capacity);
    case AllocatorKind::kPerfect:
      break;
  }
  throw InvalidArgument("[sim] the perfect allocator has no model");
}

}  // namespace dtr::sim
