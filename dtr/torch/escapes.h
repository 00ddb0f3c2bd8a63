#pragma once
/// Note [Escapes]: plain tensors that in-place operators wrote checkpointed
/// values into, counted, with one warning per operator.
#include <cstdint>
#include <string>
#include <unordered_set>

namespace dtr::pt {

class Escapes {
 public:
  /// `count` plain tensors written by the operator `name`.
  void note(const std::string& name, int count);
  std::uint64_t count() const { return count_; }

 private:
  std::uint64_t count_ = 0;
  std::unordered_set<std::string> warned_;  // operators already reported
};

}  // namespace dtr::pt
