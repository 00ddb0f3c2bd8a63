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
#include <vector>

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
      const std::uint64_t v = mix(h, i + 1);
      slot(truth_, out) = {v, true};
      slot(values_, out) = {v, true};
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
      DTR_FUZZ_CHECK(
          out < truth_.size() && truth_[out].known && truth_[out].value == v,
          "replay of op ", op, " gives tensor ", out, " another value");
      slot(values_, out) = {v, true};
    }
  }

  void release_storage(const Graph& g, StorageId s) override {
    DTR_FUZZ_CHECK(g.storage(s).locks == 0, "storage ", s,
                   " freed while locked");
    for (TensorId t : g.storage(s).tensors) {
      if (t < values_.size()) values_[t].known = false;
    }
  }

  std::uint64_t read(TensorId t) const {
    DTR_FUZZ_CHECK(has(t), "read of freed tensor ", t);
    return values_[t].value;
  }
  bool has(TensorId t) const { return t < values_.size() && values_[t].known; }
  std::uint64_t truth(TensorId t) const {
    DTR_FUZZ_CHECK(t < truth_.size() && truth_[t].known, "tensor ", t,
                   " was never computed");
    return truth_[t].value;
  }

 private:
  static std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
  }

  // Indexed by tensor id (ids are dense): read after every fuzz step, so a
  // vector rather than a hash map.
  struct Value {
    std::uint64_t value = 0;
    bool known = false;
  };
  static Value& slot(std::vector<Value>& v, TensorId t) {
    if (t >= v.size()) v.resize(t + 1);
    return v[t];
  }
  std::vector<Value> values_;  // current buffers (absent: freed)
  std::vector<Value> truth_;   // first computed values
  std::uint32_t fail_in_ = 0;
};

}  // namespace dtr::fuzz
