#include "dtr/core/error.h"

namespace dtr {

OutOfMemory::OutOfMemory(std::int64_t needed_bytes,
                         std::int64_t evictable_bytes,
                         std::int64_t budget_bytes, std::int64_t used_bytes)
    : Error(detail::concat("[dtr] out of memory: needed ", needed_bytes,
                           " more bytes with ", used_bytes, " of ",
                           budget_bytes, " budget bytes in use, but only ",
                           evictable_bytes, " bytes are evictable")),
      needed_bytes_(needed_bytes),
      evictable_bytes_(evictable_bytes),
      budget_bytes_(budget_bytes),
      used_bytes_(used_bytes) {}

OutOfMemory OutOfMemory::while_rematerializing(const OutOfMemory& cause,
                                               const std::string& what) {
  OutOfMemory e(cause, detail::concat(cause.what(), " (while rematerializing ",
                                      what, ")"));
  e.rematerializing_ = what;
  return e;
}

RematLimitExceeded::RematLimitExceeded(std::int64_t remat_compute_ns,
                                       std::int64_t limit_ns)
    : Error(detail::concat(
          "[dtr] rematerialization limit exceeded: ", remat_compute_ns,
          " ns recomputed, limit ", limit_ns, " ns")),
      remat_compute_ns_(remat_compute_ns),
      limit_ns_(limit_ns) {}

}  // namespace dtr
