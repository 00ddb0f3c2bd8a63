#pragma once
/// Built-in training traces: graph builders that write one forward and one
/// backward pass of a model in the paper's log format (§d.3), the default
/// data of the simulator. Sizes come from real shapes (float32), times from a
/// deterministic cost model (cost_model.h); the same options always give a
/// byte-identical trace.
///
///   dtr::trace::TraceWriter out(std::cout);
///   dtr::models::build_model("resnet", {.batch = 32}, out);
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/trace/trace_writer.h"

namespace dtr::models {

/// Size knobs shared by every model; 0 means the model's default (see
/// describe_model). Each model reads the knobs that make sense for it.
struct ModelOptions {
  int batch = 0;           ///< examples per step (rows per node for treelstm)
  int depth = 0;           ///< layers, sequence length or tree depth
  int width = 0;           ///< channels or hidden/model dimension
  std::uint64_t seed = 1;  ///< tree shapes (treelstm) and the ±5% time jitter
};

/// Names of the built-in models, in a fixed order: "chain", "resnet",
/// "densenet", "unet", "lstm", "treelstm", "transformer". `dtr train` uses
/// the same names for its LibTorch models (plus "mlp"; it has no "chain").
/// build_model and describe_model also accept "resnet32" for "resnet".
const std::vector<std::string>& model_names();

/// Writes the trace of model `name` to `out`. Throws dtr::InvalidArgument
/// naming the model and listing the known ones if `name` is unknown, or if
/// an option is negative or out of the model's range.
void build_model(std::string_view name, const ModelOptions& options,
                 trace::TraceWriter& out);

/// One line describing model `name` and its defaults (for --help and docs).
/// Throws dtr::InvalidArgument like build_model.
std::string describe_model(std::string_view name);

}  // namespace dtr::models
