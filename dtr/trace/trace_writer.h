#pragma once
/// Writes the paper's trace format (JSON Lines, one instruction per line,
/// keys sorted, numbers as strings except MUTATE's index list), so that the
/// authors' simulator and ours can both replay what dtr records or builds.
/// See docs/trace-format.md.
///
///   dtr::trace::TraceWriter w(std::cout);
///   w.annotate("START");
///   w.constant("x1", 4096);
///   w.call("relu", {"x1"}, {{"x2", 4096}}, 1200);
///   w.release("x2");
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dtr::trace {

class TraceWriter {
 public:
  /// One CALL result: its name, its storage size and the index of the
  /// argument it aliases (-1: a new storage). For an alias, `bytes` should
  /// be the aliased storage's size, as the paper's logger writes it.
  struct Result {
    std::string name;
    std::int64_t bytes = 0;
    int alias = -1;
  };

  explicit TraceWriter(std::ostream& out) : out_(out) {}

  void annotate(std::string_view annotation);
  void constant(std::string_view name, std::int64_t bytes);
  /// A `workspace_bytes` above 0 is written as WORKSPACE (Note
  /// [Workspace]).
  void call(std::string_view op, std::span<const std::string> args,
            std::span<const Result> results, std::int64_t time_ns,
            std::int64_t workspace_bytes = 0);
  void call(std::string_view op, std::initializer_list<std::string> args,
            std::initializer_list<Result> results, std::int64_t time_ns,
            std::int64_t workspace_bytes = 0) {
    std::vector<std::string> a(args);
    std::vector<Result> r(results);
    call(op, a, r, time_ns, workspace_bytes);
  }
  void mutate(std::string_view op, std::span<const std::string> args,
              std::span<const int> mutated, std::int64_t time_ns);
  void copy(std::string_view dst, std::string_view src);
  void copy_from(std::string_view dst, std::string_view src);
  void release(std::string_view name);
  /// The value must stay resident (PIN) / may be evicted again (UNPIN).
  void pin(std::string_view name);
  void unpin(std::string_view name);

  /// Instructions written so far.
  std::size_t lines() const { return lines_; }

 private:
  void emit(const std::string& line);
  std::ostream& out_;
  std::size_t lines_ = 0;
};

}  // namespace dtr::trace
