#pragma once
/// One training step's operator calls, as `auto` needs them
/// (auto_heuristic.h): a signature of the step's graph shape, always, and
/// on request the step itself as a program for the simulator.
///
/// Note [Step signatures]
/// The signature hashes, in call order, each op's name, its number of
/// inputs and each output's size and alias, and each constant's size; never
/// the measured times, which differ from step to step. Two steps of a
/// static model have the same signature; a step of another sequence length
/// or batch has another. It costs one hash update per call, which is all a
/// step with a known signature pays.
///
/// Note [Written steps]
/// A written step is built as a trace::Program directly, the program that
/// reading the step's trace (the paper's format, as dtr.record writes it)
/// would give: values made before the step (a carried state, a held value)
/// appear as constants of their storage's size at their first use, tensor
/// ids get a new value at every definition (the runtime reuses forgotten
/// ids), and values still referenced at the end are pinned in value order.
/// Writing the JSON text and parsing it back cost ~10 us per call, ten
/// times the kernel's own cost, on every call of a written step
/// (docs/benchmarks.md); tests/torch/step_recording_test.cpp checks the
/// direct program against the text's. A step longer than kMaxWrittenCalls
/// (a program with no step boundaries grows one step forever) stops being
/// written: its memory is freed and auto makes no decision on it.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dtr/core/graph.h"
#include "dtr/core/runtime.h"
#include "dtr/torch/run_listener.h"
#include "dtr/trace/program.h"

namespace dtr::pt {

class StepRecording final : public RunListener {
 public:
  static constexpr std::uint64_t kMaxWrittenCalls = std::uint64_t{1} << 18;

  StepRecording();
  /// Starts a new step: signature reset; writes the step if `write`.
  void restart(bool write);
  bool writing() const { return writing_; }

  void constant(TensorId id, std::int64_t bytes) override;
  /// For an alias output, specs[i].bytes is ignored (aliases share a
  /// storage); `g` gives the sizes of values made before the step.
  void call(const Graph& g, const std::string& op,
            std::span<const TensorId> inputs, std::span<const TensorId> outputs,
            std::span<const OutputSpec> specs, std::int64_t cost_ns,
            std::int64_t workspace_bytes) override;
  void release(TensorId id) override;
  /// Holds of values this step defined, as the trace writes them.
  void pin(TensorId id) override;
  void unpin(TensorId id) override;
  /// LINEAGE_CUT is marked in the program as the trace reader marks it;
  /// no marker changes the signature.
  void annotate(const std::string& what) override;

  std::uint64_t signature() const { return hash_; }
  std::uint64_t calls() const { return calls_; }
  /// The written step as a Program (only if writing()).
  trace::Program program() const;

 private:
  void mix(std::uint64_t v);
  void mix(const std::string& s);
  trace::ValueId define(TensorId id);
  trace::ValueId use(const Graph& g, TensorId id);
  bool mapped(TensorId id) const {
    return id < stamp_.size() && stamp_[id] == epoch_;
  }
  void add_op(trace::ProgramOp op);
  trace::ValueId add_constant(TensorId id, std::int64_t bytes);
  void stop_writing();

  std::uint64_t hash_ = 0;
  std::uint64_t calls_ = 0;
  bool writing_ = false;
  bool in_backward_ = false;
  trace::Program program_;
  // Per tensor id: its value in this step, valid iff stamp_[id] == epoch_.
  std::vector<trace::ValueId> value_of_;
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 1;
  std::vector<bool> released_;  // per value
};

}  // namespace dtr::pt
