#include "dtr/models/model_registry.h"

#include <array>
#include <sstream>

#include "dtr/core/error.h"
#include "dtr/models/builders_impl.h"

namespace dtr::models {

namespace {

struct Entry {
  std::string_view name;
  void (*build)(const ModelOptions&, trace::TraceWriter&);
  ModelOptions defaults;
  std::string_view summary;
  std::string_view knobs;  // what batch/depth/width mean for this model
};

// Defaults keep every trace at hundreds to a few thousand ops (building and
// simulating each takes well under a second) while activations, not
// weights, dominate memory, as in the paper's traces. The recurrent models
// have many rows per step (512 for lstm, as in the paper's LSTM trace; 256
// for treelstm): with few rows the per-step weight-gradient products
// outweigh the activations and every heuristic thrashes early.
constexpr std::array<Entry, 7> kModels{{
    {"chain",
     models::build_chain,
     {32, 200, 256, 1},
     "the theory model (paper §3): a chain of unit-size, unit-cost layers",
     "batch x width floats per tensor, depth layers"},
    {"resnet",
     models::build_resnet,
     {64, 32, 16, 1},
     "CIFAR ResNet (3 stages of basic blocks, residual adds), 32x32 images",
     "depth = 6n+2 layers, width = stem channels"},
    {"densenet",
     models::build_densenet,
     {32, 64, 12, 1},
     "CIFAR DenseNet-BC (3 dense blocks concatenating every feature map)",
     "depth = 6n+4 layers, width = growth rate"},
    {"unet",
     models::build_unet,
     {8, 4, 32, 1},
     "U-Net segmentation, 128x128 images, skip connections by concatenation",
     "depth = down-sampling levels, width = first-level channels"},
    {"lstm",
     models::build_lstm,
     {512, 64, 512, 1},
     "one LSTM layer unrolled over a sequence, gates split from one product",
     "depth = sequence length, width = hidden size (input = width/2)"},
    {"treelstm",
     models::build_treelstm,
     {256, 6, 128, 1},
     "binary Tree-LSTM over a random tree drawn from the seed (dynamic)",
     "batch = rows per node, depth = maximum tree depth, width = hidden size"},
    {"transformer",
     models::build_transformer,
     {8, 6, 256, 1},
     "Transformer encoder: 8-head attention, layer norm, dropout, residuals; "
     "256 tokens, 1000-word vocabulary",
     "depth = encoder layers, width = model dimension (feed-forward 4x)"},
}};

const Entry& find(std::string_view name) {
  // "resnet32": what `dtr train` called its (same) model before the names
  // were unified; the default depth is 32.
  const std::string_view key = name == "resnet32" ? "resnet" : name;
  for (const Entry& e : kModels) {
    if (e.name == key) return e;
  }
  std::ostringstream known;
  for (const Entry& e : kModels)
    known << (&e == kModels.data() ? "" : ", ") << e.name;
  throw InvalidArgument(detail::concat("[model] unknown model '", name,
                                       "'; known models: ", known.str()));
}

// The caps only stop a typo from writing terabytes of trace. Depth goes to
// 2^21, so that a chain of 10^6 layers (2 x 10^6 ops, ~0.7 GB) can be
// written to test the simulator at scale; the output is streamed.
constexpr int kMaxBatch = 1 << 16;
constexpr int kMaxDepth = 1 << 21;
constexpr int kMaxWidth = 1 << 16;

void check_knob(std::string_view model, const char* knob, int value, int max) {
  DTR_CHECK(value >= 0 && value <= max, "[model ", model, "] ", knob, " = ",
            value, " is out of range [0, ", max, "] (0 = default)");
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Entry& e : kModels) v.emplace_back(e.name);
    return v;
  }();
  return names;
}

void build_model(std::string_view name, const ModelOptions& options,
                 trace::TraceWriter& out) {
  const Entry& e = find(name);
  check_knob(name, "batch", options.batch, kMaxBatch);
  check_knob(name, "depth", options.depth, kMaxDepth);
  check_knob(name, "width", options.width, kMaxWidth);
  ModelOptions o = options;
  if (o.batch == 0) o.batch = e.defaults.batch;
  if (o.depth == 0) o.depth = e.defaults.depth;
  if (o.width == 0) o.width = e.defaults.width;
  e.build(o, out);
}

std::string describe_model(std::string_view name) {
  const Entry& e = find(name);
  return detail::concat(e.name, ": ", e.summary, " (", e.knobs,
                        "; defaults batch=", e.defaults.batch,
                        " depth=", e.defaults.depth,
                        " width=", e.defaults.width, ")");
}

}  // namespace dtr::models
