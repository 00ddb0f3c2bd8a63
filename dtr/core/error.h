#pragma once
/// Errors thrown by dtr. Bad input at a public boundary throws a subclass of
/// dtr::Error whose message names the place and the bad value; broken
/// invariants throw dtr::InternalError (never abort), so a caller can report
/// them and a test can catch them.
#include <cstdint>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dtr {

/// Base of every exception dtr throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller passed an argument that is not acceptable (unknown name, bad id).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// Sizes or costs given by the caller add up past what dtr counts in int64
/// (see kMaxTotalBytes, kMaxTotalCostNs in limits.h): absurd input.
class OverflowError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// An internal invariant does not hold: a bug in dtr, not in the caller.
class InternalError : public Error {
 public:
  using Error::Error;
};

/// Memory was needed and nothing evictable was left. The runtime stays
/// consistent: every lock taken by the failed request has been released.
class OutOfMemory : public Error {
 public:
  OutOfMemory(std::int64_t needed_bytes, std::int64_t evictable_bytes,
              std::int64_t budget_bytes, std::int64_t used_bytes);
  /// The same failure explained by a frontend (e.g. the floor it implies).
  OutOfMemory(const OutOfMemory& cause, const std::string& message)
      : Error(message),
        needed_bytes_(cause.needed_bytes_),
        evictable_bytes_(cause.evictable_bytes_),
        budget_bytes_(cause.budget_bytes_),
        used_bytes_(cause.used_bytes_),
        rematerializing_(cause.rematerializing_) {}
  /// `cause`, met while recomputing what `rematerializing` names (the
  /// runtime's words: "tensor 7 (op 'relu', op 3), needed for ...").
  static OutOfMemory while_rematerializing(const OutOfMemory& cause,
                                           const std::string& what);
  std::int64_t needed_bytes() const { return needed_bytes_; }
  std::int64_t evictable_bytes() const { return evictable_bytes_; }
  std::int64_t budget_bytes() const { return budget_bytes_; }
  std::int64_t used_bytes() const { return used_bytes_; }
  /// What was being recomputed when memory ran out; empty if nothing was.
  const std::string& rematerializing() const { return rematerializing_; }

 private:
  std::int64_t needed_bytes_;
  std::int64_t evictable_bytes_;
  std::int64_t budget_bytes_;
  std::int64_t used_bytes_;
  std::string rematerializing_;
};

/// Rematerialization compute exceeded the configured limit ("thrashing").
class RematLimitExceeded : public Error {
 public:
  RematLimitExceeded(std::int64_t remat_compute_ns, std::int64_t limit_ns);
  std::int64_t remat_compute_ns() const { return remat_compute_ns_; }
  std::int64_t limit_ns() const { return limit_ns_; }

 private:
  std::int64_t remat_compute_ns_;
  std::int64_t limit_ns_;
};

/// The Executor failed while replaying an op to rematerialize a tensor.
/// The message names the tensor, the op and the tensor that needed it, then
/// the cause's message; cause() is the original exception. The runtime is
/// consistent afterwards: every lock taken by the request is released.
class RematerializationError : public Error {
 public:
  RematerializationError(const std::string& message, std::exception_ptr cause)
      : Error(message), cause_(std::move(cause)) {}
  const std::exception_ptr& cause() const { return cause_; }

 private:
  std::exception_ptr cause_;
};

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

}  // namespace dtr

/// Checks a condition on caller input; throws dtr::InvalidArgument.
#define DTR_CHECK(cond, ...)                                            \
  do {                                                                  \
    if (!(cond)) {                                                      \
      throw ::dtr::InvalidArgument(::dtr::detail::concat(__VA_ARGS__)); \
    }                                                                   \
  } while (0)

/// Checks an internal invariant; throws dtr::InternalError (never aborts).
#define DTR_ASSERT(cond, ...)                                                \
  do {                                                                       \
    if (!(cond)) {                                                           \
      throw ::dtr::InternalError(                                            \
          ::dtr::detail::concat("internal error at " __FILE__ ":", __LINE__, \
                                ": " #cond " " __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                                        \
  } while (0)
