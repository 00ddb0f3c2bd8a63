#pragma once
// A test executor that gives every tensor a real value (a 64-bit hash of its
// op and its inputs' values), so tests can check that recomputed values are
// bit-identical to the originals, that no op reads a freed value, and that
// no storage is freed while locked.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dtr/core/executor.h"
#include "dtr/core/runtime.h"

namespace dtr::testing {

class CheckedExecutor : public Executor {
 public:
  /// The value a tensor must have: a pure function of its op and inputs.
  static std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
  }

  /// Computes op's outputs for the first time (the runtime only calls
  /// replay for recomputation).
  void first_compute(const Graph& g, OpId op) { produce(g, op, false); }

  void replay(const Graph& g, OpId op) override {
    ++replays_;
    produce(g, op, true);
  }

  void release_storage(const Graph& g, StorageId s) override {
    if (g.storage(s).locks != 0) {
      throw std::logic_error("storage " + std::to_string(s) +
                             " freed while locked");
    }
    for (TensorId t : g.storage(s).tensors) values_.erase(t);
  }

  /// Value of a defined tensor; throws if the buffer is gone.
  std::uint64_t read(TensorId t) const {
    auto it = values_.find(t);
    if (it == values_.end()) {
      throw std::logic_error("read of freed tensor " + std::to_string(t));
    }
    return it->second;
  }
  bool has(TensorId t) const { return values_.count(t) != 0; }
  std::uint64_t truth(TensorId t) const { return truth_.at(t); }
  std::size_t replays() const { return replays_; }

 private:
  void produce(const Graph& g, OpId op_id, bool again) {
    const Op& op = g.op(op_id);
    // A pure function of the op and its inputs (not of ids, which a failed
    // and retried call shifts).
    std::uint64_t h = std::hash<std::string_view>{}(op.name);
    for (TensorId in : op.inputs) h = mix(h, read(in));
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      TensorId out = op.outputs[i];
      std::uint64_t v = mix(h, i + 1);
      if (!again) {
        truth_[out] = v;
      } else if (truth_.at(out) != v) {
        throw std::logic_error("recomputed tensor " + std::to_string(out) +
                               " differs from the original");
      }
      auto it = values_.find(out);
      if (it != values_.end() && it->second != v) {
        throw std::logic_error("duplicate output differs");
      }
      values_[out] = v;
    }
  }

  std::unordered_map<TensorId, std::uint64_t> values_;
  std::unordered_map<TensorId, std::uint64_t> truth_;
  std::size_t replays_ = 0;
};

}  // namespace dtr::testing
