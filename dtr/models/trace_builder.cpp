#include "dtr/models/trace_builder.h"

#include <utility>

#include "dtr/core/error.h"

namespace dtr::models {

Handle::Handle(Handle&& other) noexcept
    : builder_(std::exchange(other.builder_, nullptr)),
      name_(std::move(other.name_)),
      storage_(other.storage_),
      alias_(other.alias_) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    builder_ = std::exchange(other.builder_, nullptr);
    name_ = std::move(other.name_);
    storage_ = other.storage_;
    alias_ = other.alias_;
  }
  return *this;
}

Handle::~Handle() {
  reset();
}

void Handle::reset() {
  if (builder_ != nullptr) builder_->release(*this);
}

std::int64_t Handle::storage_bytes() const {
  DTR_ASSERT(defined(), "storage_bytes of a released handle '", name_, "'");
  return builder_->storages_[storage_].bytes;
}

Handle TraceBuilder::make_handle(int storage, bool alias) {
  Handle h;
  h.builder_ = this;
  // Appended rather than "x" + to_string(): GCC 12 warns falsely
  // (-Wrestrict, bug 105329) on the operator+ form.
  h.name_ = "x";
  h.name_ += std::to_string(next_id_++);
  h.storage_ = storage;
  h.alias_ = alias;
  ++storages_[storage].handles;
  ++live_;
  return h;
}

int TraceBuilder::new_storage(std::int64_t bytes) {
  DTR_ASSERT(bytes >= 0, "negative storage size ", bytes);
  storages_.push_back({bytes, 0});
  return static_cast<int>(storages_.size() - 1);
}

void TraceBuilder::check_defined(const Handle& h,
                                 std::string_view where) const {
  DTR_ASSERT(h.builder_ == this, "[", where, "] argument '", h.name_,
             "' is released or belongs to another trace");
}

void TraceBuilder::release(Handle& h) noexcept {
  // Called from destructors: a failing stream must not terminate the
  // program, and the bookkeeping has to happen either way.
  --storages_[h.storage_].handles;
  --live_;
  h.builder_ = nullptr;
  try {
    out_.release(h.name_);
  } catch (...) {
  }
}

Handle TraceBuilder::constant(std::int64_t bytes) {
  Handle h = make_handle(new_storage(bytes), false);
  out_.constant(h.name(), bytes);
  return h;
}

std::vector<Handle> TraceBuilder::call(std::string_view op,
                                       std::span<const Handle* const> args,
                                       std::span<const Output> outputs,
                                       std::int64_t time_ns) {
  DTR_ASSERT(!outputs.empty(), "[", op, "] a CALL needs a result");
  DTR_ASSERT(time_ns >= 0, "[", op, "] negative time ", time_ns);
  std::vector<std::string> arg_names;
  arg_names.reserve(args.size());
  for (const Handle* a : args) {
    DTR_ASSERT(a != nullptr, "[", op, "] null argument");
    check_defined(*a, op);
    arg_names.push_back(a->name());
  }

  std::vector<Handle> results;
  std::vector<trace::TraceWriter::Result> logged;
  results.reserve(outputs.size());
  logged.reserve(outputs.size());
  for (const Output& o : outputs) {
    if (o.alias >= 0) {
      DTR_ASSERT(static_cast<std::size_t>(o.alias) < args.size(), "[", op,
                 "] alias index ", o.alias, " out of range");
      const int storage = args[o.alias]->storage_;
      results.push_back(make_handle(storage, true));
      logged.push_back(
          {results.back().name(), storages_[storage].bytes, o.alias});
    } else {
      results.push_back(make_handle(new_storage(o.bytes), false));
      logged.push_back({results.back().name(), o.bytes, -1});
    }
  }
  out_.call(op, arg_names, logged, time_ns);
  return results;
}

bool TraceBuilder::can_mutate(const Handle& h) const {
  return h.builder_ == this && !h.alias_ && storages_[h.storage_].handles == 1;
}

void TraceBuilder::mutate(std::string_view op, Handle& target,
                          std::span<const Handle* const> others,
                          std::int64_t time_ns) {
  DTR_ASSERT(time_ns >= 0, "[", op, "] negative time ", time_ns);
  check_defined(target, op);
  std::vector<std::string> arg_names{target.name()};
  for (const Handle* a : others) {
    DTR_ASSERT(a != nullptr, "[", op, "] null argument");
    check_defined(*a, op);
    arg_names.push_back(a->name());
  }
  DTR_ASSERT(can_mutate(target), "[", op, "] '", target.name(),
             "' is a view or shares its storage with another handle");
  const int mutated[] = {0};
  out_.mutate(op, arg_names, mutated, time_ns);
  // Copy-on-write in the simulator: the name now denotes a new storage.
  const std::int64_t bytes = storages_[target.storage_].bytes;
  --storages_[target.storage_].handles;
  target.storage_ = new_storage(bytes);
  ++storages_[target.storage_].handles;
}

Handle TraceBuilder::copy(const Handle& src) {
  check_defined(src, "COPY");
  Handle h = make_handle(src.storage_, src.alias_);
  out_.copy(h.name(), src.name());
  return h;
}

void TraceBuilder::keep(Handle& h) {
  check_defined(h, "keep");
  // The storage stays referenced for good: don't decrement its handles.
  h.builder_ = nullptr;
  --live_;
  ++kept_;
}

}  // namespace dtr::models
