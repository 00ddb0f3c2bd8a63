#include "dtr/core/dealloc_policy.h"

#include "dtr/core/error.h"

namespace dtr {

DeallocPolicy parse_dealloc_policy(std::string_view name) {
  if (name == "eager") return DeallocPolicy::kEager;
  if (name == "ignore") return DeallocPolicy::kIgnore;
  if (name == "banish") return DeallocPolicy::kBanish;
  throw InvalidArgument("[policy] unknown deallocation policy '" +
                        std::string(name) + "' (known: eager, ignore, banish)");
}

std::string_view to_string(DeallocPolicy policy) {
  switch (policy) {
    case DeallocPolicy::kEager:
      return "eager";
    case DeallocPolicy::kIgnore:
      return "ignore";
    case DeallocPolicy::kBanish:
      return "banish";
  }
  return "?";
}

}  // namespace dtr
