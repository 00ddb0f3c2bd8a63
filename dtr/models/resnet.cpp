// CIFAR ResNet (He et al. 2016, §4.2), the family of the paper's ResNet-32
// trace: a 3x3 stem, three stages of n basic blocks at width w, 2w, 4w
// (stride 2 between stages, "option A" shortcuts that subsample and
// zero-pad), global average pooling and a linear classifier.
#include "dtr/core/error.h"
#include "dtr/models/builders_impl.h"
#include "dtr/models/layers.h"
#include "dtr/models/ops.h"

namespace dtr::models {

namespace {

constexpr std::int64_t kImage = 32;
constexpr std::int64_t kClasses = 10;

struct BasicBlock {
  Var conv1;
  BatchNorm2d bn1;
  Var conv2;
  BatchNorm2d bn2;
  int stride;
};

BasicBlock make_block(Tape& tape, std::int64_t in, std::int64_t out,
                      int stride) {
  BasicBlock b;
  b.conv1 = make_conv_weight(tape, in, out, 3);
  b.bn1 = make_batch_norm(tape, out);
  b.conv2 = make_conv_weight(tape, out, out, 3);
  b.bn2 = make_batch_norm(tape, out);
  b.stride = stride;
  return b;
}

// Option A shortcut: x[:, :, ::2, ::2] (two slice views) zero-padded to the
// doubled channel count, so it has no parameters.
Var shortcut(const Var& x, std::int64_t channels) {
  Var sub = slice(slice(x, 2, 0, x.dim(2), 2), 3, 0, x.dim(3), 2);
  return pad_to(sub, {x.dim(0), channels, sub.dim(2), sub.dim(3)});
}

Var basic_block(const Var& x, BasicBlock& b) {
  Var out = relu(batch_norm(conv2d(x, b.conv1, b.stride, 1), b.bn1));
  out = batch_norm(conv2d(out, b.conv2, 1, 1), b.bn2);
  if (b.stride == 1) return relu(add(out, x));
  return relu(add(out, shortcut(x, out.dim(1))));
}

}  // namespace

void build_resnet(const ModelOptions& o, trace::TraceWriter& out) {
  DTR_CHECK(o.depth >= 8 && (o.depth - 2) % 6 == 0,
            "[model resnet] depth must be 6n+2 with n >= 1 (20, 32, 56, ...), "
            "got ",
            o.depth);
  const int blocks_per_stage = (o.depth - 2) / 6;
  const std::int64_t w = o.width;
  Tape tape(out, CostModel(o.seed));

  // Parameters first, as constructing the nn.Module does.
  Var stem = make_conv_weight(tape, 3, w, 3);
  BatchNorm2d stem_bn = make_batch_norm(tape, w);
  std::vector<BasicBlock> blocks;
  std::int64_t channels = w;
  for (int stage = 0; stage < 3; ++stage) {
    for (int i = 0; i < blocks_per_stage; ++i) {
      const bool down = stage > 0 && i == 0;
      const std::int64_t next = down ? 2 * channels : channels;
      blocks.push_back(make_block(tape, channels, next, down ? 2 : 1));
      channels = next;
    }
  }
  Linear fc = make_linear(tape, channels, kClasses);

  Var images = tape.constant({o.batch, 3, kImage, kImage});
  Var labels = tape.constant({o.batch}, 8);
  Var h = relu(batch_norm(conv2d(images, stem, 1, 1), stem_bn));
  for (BasicBlock& b : blocks) h = basic_block(h, b);
  h = view(avg_pool2d(h, static_cast<int>(h.dim(2))), {o.batch, channels});
  Var loss = nll_loss(log_softmax(linear(h, fc)), labels);
  h.reset();
  tape.backward(loss);
}

}  // namespace dtr::models
