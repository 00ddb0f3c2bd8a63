// Uses the installed dtr::torch: a checkpointed computation under a budget
// equals the plain one.
#include <ATen/ATen.h>

#include <cstdio>

#include "dtr/torch/dtr_torch.h"

int main() {
  at::manual_seed(0);
  at::Tensor x = at::randn({64, 64});
  at::Tensor plain = at::relu(x.matmul(x)).sum(1);

  at::Tensor result;
  {
    dtr::pt::Budget guard(1 << 20);
    at::Tensor cx = dtr::pt::checkpoint(x);
    at::Tensor y = at::relu(cx.matmul(cx)).sum(1);
    if (!dtr::pt::is_checkpoint(y)) {
      std::fprintf(stderr, "torch_consumer: result is not checkpointed\n");
      return 1;
    }
    result = dtr::pt::decheckpoint(y);
  }
  if (!at::equal(result, plain)) {  // torch::equal is this function
    std::fprintf(stderr, "torch_consumer: checkpointed result differs\n");
    return 1;
  }
  std::printf("torch_consumer: ok\n");
  return 0;
}
