// CIFAR DenseNet-BC (Huang et al. 2017) written the way torchvision's
// DenseNet runs it, the shape of the paper's DenseNet-121 trace: every
// bottleneck layer concatenates all earlier feature maps of its block (a new
// `_cat` each time), then BN-ReLU(in place)-conv1x1-BN-ReLU-conv3x3. The
// concatenations' backward slices the gradient once per input and sums the
// slices per feature map, so the graph is dense and memory grows
// quadratically with the block length.
#include "dtr/core/error.h"
#include "dtr/models/builders_impl.h"
#include "dtr/models/layers.h"
#include "dtr/models/ops.h"

namespace dtr::models {

namespace {

constexpr std::int64_t kImage = 32;
constexpr std::int64_t kClasses = 10;
constexpr int kBlocks = 3;

struct DenseLayer {
  BatchNorm2d bn1;
  Var conv1;  // 1x1 to 4 * growth channels
  BatchNorm2d bn2;
  Var conv2;  // 3x3 to growth channels
};

struct Transition {
  BatchNorm2d bn;
  Var conv;  // 1x1, halves the channels
};

Var bn_relu_(const Var& x, BatchNorm2d& bn) {
  Var y = batch_norm(x, bn);
  relu_(y);
  return y;
}

Var dense_layer(const std::vector<Var>& features, DenseLayer& l) {
  Var bottleneck = conv2d(bn_relu_(cat(features, 1), l.bn1), l.conv1, 1, 0);
  return conv2d(bn_relu_(bottleneck, l.bn2), l.conv2, 1, 1);
}

}  // namespace

void build_densenet(const ModelOptions& o, trace::TraceWriter& out) {
  DTR_CHECK(o.depth >= 10 && (o.depth - 4) % 6 == 0,
            "[model densenet] depth must be 6n+4 with n >= 1 (40, 100, ...), "
            "got ",
            o.depth);
  const int layers_per_block = (o.depth - 4) / 6;
  const std::int64_t growth = o.width;
  Tape tape(out, CostModel(o.seed));

  Var stem = make_conv_weight(tape, 3, 2 * growth, 3);
  std::vector<std::vector<DenseLayer>> blocks(kBlocks);
  std::vector<Transition> transitions;
  std::int64_t channels = 2 * growth;
  for (int b = 0; b < kBlocks; ++b) {
    for (int i = 0; i < layers_per_block; ++i) {
      const std::int64_t in = channels + i * growth;
      blocks[b].push_back({make_batch_norm(tape, in),
                           make_conv_weight(tape, in, 4 * growth, 1),
                           make_batch_norm(tape, 4 * growth),
                           make_conv_weight(tape, 4 * growth, growth, 3)});
    }
    channels += layers_per_block * growth;
    if (b + 1 < kBlocks) {
      transitions.push_back(
          {make_batch_norm(tape, channels),
           make_conv_weight(tape, channels, channels / 2, 1)});
      channels /= 2;
    }
  }
  BatchNorm2d final_bn = make_batch_norm(tape, channels);
  Linear fc = make_linear(tape, channels, kClasses);

  Var images = tape.constant({o.batch, 3, kImage, kImage});
  Var labels = tape.constant({o.batch}, 8);
  Var h = conv2d(images, stem, 1, 1);
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<Var> features{h};
    h.reset();
    for (DenseLayer& l : blocks[b])
      features.push_back(dense_layer(features, l));
    h = cat(features, 1);
    release_all(features);
    if (b + 1 < kBlocks) {
      Transition& tr = transitions[b];
      h = avg_pool2d(conv2d(bn_relu_(h, tr.bn), tr.conv, 1, 0), 2);
    }
  }
  h = bn_relu_(h, final_bn);
  h = view(avg_pool2d(h, static_cast<int>(h.dim(2))), {o.batch, channels});
  Var loss = nll_loss(log_softmax(linear(h, fc)), labels);
  h.reset();
  tape.backward(loss);
}

}  // namespace dtr::models
