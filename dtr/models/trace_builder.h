#pragma once
/// Emits a trace the way the paper's PyTorch logger does: every handle the
/// program holds has its own name, and destroying the handle writes RELEASE.
/// The model builders sit on top of this (through Tape); nothing here knows
/// about shapes or gradients.
///
///   dtr::models::TraceBuilder b(writer);
///   dtr::models::Handle w = b.constant(4096);                 // CONSTANT x1
///   const dtr::models::Handle* args[] = {&w};
///   const dtr::models::TraceBuilder::Output outs[] = {{4096}};
///   auto y = b.call("relu", args, outs, 1200);             // CALL ... x2
///   // leaving scope writes RELEASE x2, then RELEASE x1
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/trace/trace_writer.h"

namespace dtr::models {

class TraceBuilder;

/// One program handle on a traced tensor (a logged name). Move-only; the
/// destructor (or reset()) writes RELEASE, like the destructor of a PyTorch
/// tensor handle. Duplicate it with TraceBuilder::copy (writes COPY).
class Handle {
 public:
  Handle() = default;
  Handle(Handle&& other) noexcept;
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle();

  /// False once released, moved from, or kept as a trace output.
  bool defined() const { return builder_ != nullptr; }
  const std::string& name() const { return name_; }
  /// Size of the storage this handle's tensor lives in (for an alias: the
  /// aliased storage, as the logger's MEMORY line reports it).
  std::int64_t storage_bytes() const;
  /// True if the tensor is a view of a storage another op created.
  bool is_alias() const { return alias_; }
  /// Writes RELEASE now; afterwards defined() is false.
  void reset();

 private:
  friend class TraceBuilder;
  TraceBuilder* builder_ = nullptr;
  std::string name_;
  int storage_ = -1;
  bool alias_ = false;
};

class TraceBuilder {
 public:
  /// One CALL result: `bytes` for a new storage, or `alias` = the index of
  /// the argument whose storage it views (then `bytes` is ignored and the
  /// aliased storage's size is logged).
  struct Output {
    std::int64_t bytes = 0;
    int alias = -1;
  };

  explicit TraceBuilder(trace::TraceWriter& out) : out_(out) {}
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  void annotate(std::string_view annotation) { out_.annotate(annotation); }

  /// CONSTANT + MEMORY: a tensor nothing can recompute (weights, inputs).
  Handle constant(std::int64_t bytes);

  /// CALL + one MEMORY/ALIAS pair per output. Every argument must be a
  /// defined handle; throws dtr::InternalError otherwise.
  std::vector<Handle> call(std::string_view op,
                           std::span<const Handle* const> args,
                           std::span<const Output> outputs,
                           std::int64_t time_ns);

  /// True if `h` may be mutated in place: it is the only live handle on its
  /// storage and not a view (DTR cannot rewrite a mutation through aliases).
  bool can_mutate(const Handle& h) const;

  /// MUTATE with ARGS = [target, others...] and index 0 mutated (the only
  /// index the paper's logs ever mutate). The simulator turns it into a
  /// copy-on-write op, so afterwards `target` names a fresh storage of the
  /// same size. Throws dtr::InternalError unless can_mutate(target).
  void mutate(std::string_view op, Handle& target,
              std::span<const Handle* const> others, std::int64_t time_ns);

  /// COPY: a second handle on the same tensor (autograd saving a variable).
  Handle copy(const Handle& src);

  /// Leaves `h` alive at the end of the trace, so the simulator treats its
  /// tensor as a required output (weight gradients, updated buffers).
  void keep(Handle& h);

  /// Handles neither released nor kept (for tests and assertions).
  std::size_t live_handles() const { return live_; }
  /// Handles kept as outputs.
  std::size_t kept_handles() const { return kept_; }

 private:
  friend class Handle;
  struct Storage {
    std::int64_t bytes = 0;
    int handles = 0;
  };

  Handle make_handle(int storage, bool alias);
  int new_storage(std::int64_t bytes);
  void release(Handle& h) noexcept;
  void check_defined(const Handle& h, std::string_view where) const;

  trace::TraceWriter& out_;
  std::vector<Storage> storages_;
  std::int64_t next_id_ = 1;
  std::size_t live_ = 0;
  std::size_t kept_ = 0;
};

}  // namespace dtr::models
