#include <ATen/CPUGeneratorImpl.h>

#include "dtr/core/error.h"
#include "examples/models/models.h"

namespace dtr::models {

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {
      "mlp", "resnet32", "densenet", "unet", "lstm", "treelstm",
      "transformer"};
  return names;
}

std::int64_t default_batch(const std::string& name) {
  if (name == "mlp") return 2048;
  if (name == "resnet32") return 16;
  if (name == "densenet") return 16;
  if (name == "unet") return 4;
  if (name == "lstm") return 256;
  if (name == "treelstm") return 64;
  if (name == "transformer") return 16;
  throw InvalidArgument("[train] unknown model '" + name + "'");
}

std::unique_ptr<Task> make_task(const std::string& name, std::int64_t batch) {
  DTR_CHECK(batch > 0, "[train] batch must be positive, got ", batch);
  if (name == "mlp") return make_mlp(batch);
  if (name == "resnet32") return make_resnet32(batch);
  if (name == "densenet") return make_densenet(batch);
  if (name == "unet") return make_unet(batch);
  if (name == "lstm") return make_lstm(batch);
  if (name == "treelstm") return make_treelstm(batch);
  if (name == "transformer") return make_transformer(batch);
  throw InvalidArgument("[train] unknown model '" + name +
                        "' (mlp, resnet32, densenet, unet, lstm, treelstm, "
                        "transformer)");
}

torch::Generator data_generator(std::int64_t step) {
  return at::detail::createCPUGenerator(
      static_cast<std::uint64_t>(0x5eed0000 + step));
}

}  // namespace dtr::models
