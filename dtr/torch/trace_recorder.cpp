#include "dtr/torch/trace_recorder.h"

#include <vector>

#include "dtr/trace/trace_writer.h"

namespace dtr::pt {

namespace {
std::string name_of(TensorId id) {
  return "x" + std::to_string(id);
}
}  // namespace

TraceRecorder::TraceRecorder(std::ostream& out)
    : writer_(std::make_unique<trace::TraceWriter>(out)) {}

TraceRecorder::~TraceRecorder() = default;

void TraceRecorder::annotate(const std::string& what) {
  writer_->annotate(what);
}

void TraceRecorder::constant(TensorId id, std::int64_t bytes) {
  writer_->constant(name_of(id), bytes);
}

void TraceRecorder::call(const std::string& op,
                         std::span<const TensorId> inputs,
                         std::span<const TensorId> outputs,
                         std::span<const OutputSpec> specs,
                         std::int64_t time_ns) {
  std::vector<std::string> args;
  args.reserve(inputs.size());
  for (TensorId in : inputs) args.push_back(name_of(in));
  std::vector<trace::TraceWriter::Result> results;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::int64_t bytes = specs[i].bytes;
    results.push_back({name_of(outputs[i]), bytes, specs[i].alias_of});
  }
  writer_->call(op, args, results, time_ns);
}

void TraceRecorder::release(TensorId id) {
  writer_->release(name_of(id));
}

}  // namespace dtr::pt
