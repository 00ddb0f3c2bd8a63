#pragma once
/// What the runtime does when the program drops its last handle to a value
/// (paper App. C.5, D.2).
#include <string>
#include <string_view>

namespace dtr {

enum class DeallocPolicy {
  kEager,   ///< evict at once; stays in the graph and can be recomputed
  kIgnore,  ///< only count references; eviction decides alone
  kBanish,  ///< free for good once no evicted dependent needs it; pins its
            ///< children (they can no longer be recomputed)
};

/// Parses eager / ignore / banish; throws InvalidArgument otherwise.
DeallocPolicy parse_dealloc_policy(std::string_view name);
std::string_view to_string(DeallocPolicy policy);

}  // namespace dtr
