#pragma once
/// One training step's operator calls, as `auto` needs them
/// (auto_heuristic.h): a signature of the step's graph shape, always, and
/// on request the step itself in the paper's trace format (the writer behind
/// dtr.record), ready for the simulator.
///
/// Note [Step signatures]
/// The signature hashes, in call order, each op's name, its number of
/// inputs and each output's size and alias, and each constant's size; never
/// the measured times, which differ from step to step. Two steps of a
/// static model have the same signature; a step of another sequence length
/// or batch has another. It costs one hash update per call, which is all a
/// step with a known signature pays.
///
/// Values made before the step (a carried state, a held value) are written
/// as constants of their storage's size at their first use. Tensor ids are
/// renamed at every definition, since the runtime reuses forgotten ids.
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <unordered_map>

#include "dtr/core/graph.h"
#include "dtr/core/runtime.h"
#include "dtr/trace/program.h"
#include "dtr/trace/trace_writer.h"

namespace dtr::pt {

class StepRecording {
 public:
  StepRecording();
  /// Starts a new step: signature reset; writes the step's text if `write`.
  void restart(bool write);
  bool writing() const { return writing_; }

  void constant(TensorId id, std::int64_t bytes);
  /// For an alias output, specs[i].bytes is ignored (aliases share a
  /// storage); `g` gives the sizes of values made before the step.
  void call(const Graph& g, const std::string& op,
            std::span<const TensorId> inputs, std::span<const TensorId> outputs,
            std::span<const OutputSpec> specs, std::int64_t cost_ns);
  void release(TensorId id);

  std::uint64_t signature() const { return hash_; }
  std::uint64_t calls() const { return calls_; }
  /// The written step as a Program (only if writing()); throws TraceError
  /// if the text does not read back, which would be a bug here.
  trace::Program program() const;

 private:
  void mix(std::uint64_t v);
  void mix(const std::string& s);
  const std::string& define(TensorId id);
  const std::string& use(const Graph& g, TensorId id);

  std::uint64_t hash_ = 0;
  std::uint64_t calls_ = 0;
  bool writing_ = false;
  std::ostringstream text_;
  trace::TraceWriter writer_;
  std::unordered_map<TensorId, std::string> names_;
  std::uint64_t next_name_ = 0;
};

}  // namespace dtr::pt
