#pragma once
// A test executor for runtime_fuzz: every tensor gets a value (a hash of its
// op's name and its inputs' values, as tests/support/checked_executor.h
// does), so a replay that reads a freed input or recomputes a different
// value is caught; a buffer freed while locked is caught; and a replay can
// be made to throw at a chosen moment, to check that the runtime stays
// usable after an executor failure.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "dtr/core/executor.h"
#include "invariants.h"

namespace dtr::fuzz {

/// What the injected failure throws: deliberately not a dtr::Error.
struct InjectedFailure : std::runtime_error {
  InjectedFailure() : std::runtime_error("injected replay failure") {}
};

class FaultExecutor : public Executor {
 public:
  /// The `n`-th replay from now (1 = the next) throws; 0 disarms.
  void arm(std::uint32_t n) { fail_in_ = n; }

  /// Hash of an op that has run for the first time, from its inputs'
  /// original values (the runtime may free an input as the call returns,
  /// e.g. a released constant under free_dead_constants).
  std::uint64_t first_hash(std::string_view name,
                           std::span<const TensorId> inputs) const {
    std::uint64_t h = std::hash<std::string_view>{}(name);
    for (TensorId in : inputs) h = mix(h, truth(in));
    return h;
  }
  /// Records the first values of op's outputs (after call / end_call).
  void first_compute(const Graph& g, OpId op, std::uint64_t h) {
    for (std::size_t i = 0; i < g.op(op).outputs.size(); ++i) {
      TensorId out = g.op(op).outputs[i];
      truth_[out] = values_[out] = mix(h, i + 1);
    }
  }

  void replay(const Graph& g, OpId op) override {
    if (fail_in_ != 0 && --fail_in_ == 0) throw InjectedFailure();
    // A replay reads its inputs' current buffers: they must be resident.
    const Op& o = g.op(op);
    std::uint64_t h = std::hash<std::string_view>{}(o.name);
    for (TensorId in : o.inputs) h = mix(h, read(in));
    for (std::size_t i = 0; i < o.outputs.size(); ++i) {
      TensorId out = o.outputs[i];
      std::uint64_t v = mix(h, i + 1);
      auto it = truth_.find(out);
      DTR_FUZZ_CHECK(it != truth_.end() && it->second == v, "replay of op ",
                     op, " gives tensor ", out, " another value");
      values_[out] = v;
    }
  }

  void release_storage(const Graph& g, StorageId s) override {
    DTR_FUZZ_CHECK(g.storage(s).locks == 0, "storage ", s,
                   " freed while locked");
    for (TensorId t : g.storage(s).tensors) values_.erase(t);
  }

  std::uint64_t read(TensorId t) const {
    auto it = values_.find(t);
    DTR_FUZZ_CHECK(it != values_.end(), "read of freed tensor ", t);
    return it->second;
  }
  bool has(TensorId t) const { return values_.count(t) != 0; }
  std::uint64_t truth(TensorId t) const {
    auto it = truth_.find(t);
    DTR_FUZZ_CHECK(it != truth_.end(), "tensor ", t, " was never computed");
    return it->second;
  }

 private:
  static std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
  }

  std::unordered_map<TensorId, std::uint64_t> values_;
  std::unordered_map<TensorId, std::uint64_t> truth_;
  std::uint32_t fail_in_ = 0;
};

}  // namespace dtr::fuzz
