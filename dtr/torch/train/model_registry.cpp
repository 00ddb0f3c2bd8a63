#include <ATen/CPUGeneratorImpl.h>

#include "dtr/core/error.h"
#include "dtr/torch/train/models.h"

namespace dtr::pt::train {

namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Task> (*make)(std::int64_t batch);
  std::int64_t default_batch;  ///< activations dominate, one step ~1 s
  /// Models with a sequence length: the factory that takes it.
  std::unique_ptr<Task> (*make_with_seq_len)(std::int64_t batch,
                                             std::int64_t seq_len) = nullptr;
};

// The names are the simulator's model names (dtr/models/model_registry.h)
// where both have the model: `dtr gen resnet` and `dtr train --model
// resnet` are the same CIFAR ResNet-32.
constexpr Entry kModels[] = {
    {"mlp", make_mlp, 2048},
    {"resnet", make_resnet32, 16},
    {"densenet", make_densenet, 16},
    {"unet", make_unet, 4},
    {"lstm",
     [](std::int64_t batch) { return make_lstm(batch, kDefaultLstmSeqLen); },
     256, make_lstm},
    {"treelstm", make_treelstm, 64},
    {"transformer", make_transformer, 16},
};

const Entry& find(const std::string& name) {
  // "resnet32": the name before the simulator's and these were unified.
  const std::string key = name == "resnet32" ? "resnet" : name;
  for (const Entry& e : kModels) {
    if (key == e.name) return e;
  }
  std::string known;
  for (const Entry& e : kModels) {
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  throw InvalidArgument("[train] unknown model '" + name + "' (" + known +
                        "; resnet32 = resnet)");
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Entry& e : kModels) out.emplace_back(e.name);
    return out;
  }();
  return names;
}

std::int64_t default_batch(const std::string& name) {
  return find(name).default_batch;
}

std::unique_ptr<Task> make_task(const std::string& name, std::int64_t batch,
                                std::optional<std::int64_t> seq_len) {
  DTR_CHECK(batch > 0, "[train] batch must be positive, got ", batch);
  const Entry& e = find(name);
  if (!seq_len) return e.make(batch);
  DTR_CHECK(e.make_with_seq_len != nullptr, "[train] model '", name,
            "' has no sequence length (--seq-len is for lstm)");
  DTR_CHECK(*seq_len > 0, "[train] --seq-len must be positive, got ", *seq_len);
  return e.make_with_seq_len(batch, *seq_len);
}

torch::Generator data_generator(std::int64_t step) {
  return at::detail::createCPUGenerator(
      static_cast<std::uint64_t>(0x5eed0000 + step));
}

}  // namespace dtr::pt::train
