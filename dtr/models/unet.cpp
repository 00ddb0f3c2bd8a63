// U-Net (Ronneberger et al. 2015) with batch norm and padded convolutions:
// an encoder of double 3x3 conv blocks and max pooling, a decoder of 2x2
// transposed convolutions whose output is concatenated with the encoder
// feature map of the same resolution (the skip connection), and a per-pixel
// classifier. Skip connections keep the large early feature maps alive until
// the very end of backward, which is what makes U-Net hard to checkpoint.
#include "dtr/core/error.h"
#include "dtr/models/builders_impl.h"
#include "dtr/models/layers.h"
#include "dtr/models/ops.h"

namespace dtr::models {

namespace {

constexpr std::int64_t kImage = 128;
constexpr std::int64_t kInChannels = 3;
constexpr std::int64_t kClasses = 2;

struct DoubleConv {
  Var conv1;
  BatchNorm2d bn1;
  Var conv2;
  BatchNorm2d bn2;
};

DoubleConv make_double_conv(Tape& tape, std::int64_t in, std::int64_t out) {
  return {make_conv_weight(tape, in, out, 3), make_batch_norm(tape, out),
          make_conv_weight(tape, out, out, 3), make_batch_norm(tape, out)};
}

Var conv_bn_relu_(const Var& x, const Var& w, BatchNorm2d& bn) {
  Var y = batch_norm(conv2d(x, w, 1, 1), bn);
  relu_(y);
  return y;
}

Var double_conv(const Var& x, DoubleConv& d) {
  return conv_bn_relu_(conv_bn_relu_(x, d.conv1, d.bn1), d.conv2, d.bn2);
}

}  // namespace

void build_unet(const ModelOptions& o, trace::TraceWriter& out) {
  DTR_CHECK(o.depth >= 1 && o.depth <= 6,
            "[model unet] depth (down-sampling levels) must be in [1, 6], got ",
            o.depth);
  const int levels = o.depth;
  Tape tape(out, CostModel(o.seed));

  std::vector<DoubleConv> down;
  std::int64_t channels = o.width;
  down.push_back(make_double_conv(tape, kInChannels, channels));
  for (int l = 1; l <= levels; ++l) {
    down.push_back(make_double_conv(tape, channels, 2 * channels));
    channels *= 2;
  }
  std::vector<Var> up_weights;
  std::vector<DoubleConv> up;
  for (int l = levels - 1; l >= 0; --l) {
    up_weights.push_back(tape.parameter({channels, channels / 2, 2, 2}));
    up.push_back(make_double_conv(tape, channels, channels / 2));
    channels /= 2;
  }
  Var head = make_conv_weight(tape, channels, kClasses, 1);

  Var images = tape.constant({o.batch, kInChannels, kImage, kImage});
  Var labels = tape.constant({o.batch, kImage, kImage}, 8);

  std::vector<Var> skips;
  Var h = double_conv(images, down[0]);
  for (int l = 1; l <= levels; ++l) {
    skips.push_back(h);
    h = double_conv(max_pool2d(h, 2), down[l]);
  }
  for (int i = 0; i < levels; ++i) {
    Var up_sampled = conv_transpose2d(h, up_weights[i], 2);
    h = double_conv(cat({skips.back(), up_sampled}, 1), up[i]);
    skips.pop_back();
  }
  Var loss = nll_loss(log_softmax(conv2d(h, head, 1, 0)), labels);
  h.reset();
  tape.backward(loss);
}

}  // namespace dtr::models
