#pragma once
// Sets (or unsets) one environment variable for a scope and puts back what
// was there before, however the scope ends (a failed ASSERT returns early):
// no test leaks environment changes.
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace dtr::testing {

class ScopedEnv {
 public:
  /// `value` nullptr: unset the variable for the scope.
  ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) previous_ = old;
    set(value);
  }
  ~ScopedEnv() { set(previous_ ? previous_->c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const char* value) {
    if (value != nullptr) {
      ::setenv(name_.c_str(), value, /*overwrite=*/1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

  std::string name_;
  std::optional<std::string> previous_;
};

}  // namespace dtr::testing
