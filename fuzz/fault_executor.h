#pragma once
// A test executor for runtime_fuzz: every tensor gets a value (a hash of its
// op's name and its inputs' values, as tests/support/checked_executor.h
// does), so a replay that reads a freed input or recomputes a different
// value is caught; a buffer freed while locked is caught; and a replay can
// be made to throw at a chosen moment, to check that the runtime stays
// usable after an executor failure.
#include <cstdint>
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

  /// Hash of an op about to run for the first time, from its inputs'
  /// current values (they must be resident).
  std::uint64_t first_hash(const Graph& g, std::string_view name,
                           std::span<const TensorId> inputs) const {
    std::uint64_t h = std::hash<std::string_view>{}(name);
    for (TensorId in : inputs) h = mix(h, read(in));
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
    const Op& o = g.op(op);
    std::uint64_t h = first_hash(g, o.name, o.inputs);
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
  std::uint64_t truth(TensorId t) const { return truth_.at(t); }

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
