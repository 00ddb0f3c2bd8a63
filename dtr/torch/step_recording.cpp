#include "dtr/torch/step_recording.h"

#include <vector>

#include "dtr/trace/trace_reader.h"

namespace dtr::pt {

namespace {
constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
}  // namespace

StepRecording::StepRecording() : writer_(text_) {
  restart(false);
}

void StepRecording::restart(bool write) {
  hash_ = kFnvOffset;
  calls_ = 0;
  writing_ = write;
  text_.str({});
  text_.clear();
  names_.clear();
  next_name_ = 0;
  if (writing_) writer_.annotate("START");
}

void StepRecording::mix(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    hash_ = (hash_ ^ ((v >> (8 * i)) & 0xff)) * kFnvPrime;
  }
}

void StepRecording::mix(const std::string& s) {
  for (unsigned char c : s) hash_ = (hash_ ^ c) * kFnvPrime;
  mix(s.size());
}

const std::string& StepRecording::define(TensorId id) {
  std::string& name = names_[id];
  name = "v" + std::to_string(next_name_++);
  return name;
}

const std::string& StepRecording::use(const Graph& g, TensorId id) {
  auto it = names_.find(id);
  if (it != names_.end()) return it->second;
  // Made before this step: to the simulator, memory it cannot free.
  const std::string& name = define(id);
  writer_.constant(name, g.storage(g.tensor(id).storage).bytes);
  return name;
}

void StepRecording::constant(TensorId id, std::int64_t bytes) {
  mix(static_cast<std::uint64_t>(bytes));
  if (writing_) writer_.constant(define(id), bytes);
}

void StepRecording::call(const Graph& g, const std::string& op,
                         std::span<const TensorId> inputs,
                         std::span<const TensorId> outputs,
                         std::span<const OutputSpec> specs,
                         std::int64_t cost_ns) {
  ++calls_;
  mix(op);
  mix(inputs.size());
  for (const OutputSpec& s : specs) {
    mix(static_cast<std::uint64_t>(s.alias_of < 0 ? s.bytes : -1));
    mix(static_cast<std::uint64_t>(s.alias_of));
  }
  if (!writing_) return;
  std::vector<std::string> args;
  args.reserve(inputs.size());
  for (TensorId in : inputs) args.push_back(use(g, in));
  std::vector<trace::TraceWriter::Result> results;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::int64_t bytes = specs[i].bytes;
    if (specs[i].alias_of >= 0) {  // the format wants the storage's size
      bytes = g.storage(g.tensor(inputs[specs[i].alias_of]).storage).bytes;
    }
    results.push_back({define(outputs[i]), bytes, specs[i].alias_of});
  }
  writer_.call(op, args, results, cost_ns);
}

void StepRecording::release(TensorId id) {
  if (!writing_) return;
  auto it = names_.find(id);
  if (it == names_.end()) return;  // made before the step: not ours to drop
  writer_.release(it->second);
  names_.erase(it);
}

trace::Program StepRecording::program() const {
  std::istringstream in(text_.str());
  return trace::read_trace(in, "auto step");
}

}  // namespace dtr::pt
