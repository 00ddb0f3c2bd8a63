#include "dtr/torch/op_rules.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "dtr/core/error.h"
#include "dtr/torch/dtr_torch.h"

namespace dtr::pt {

std::string op_name(const c10::OperatorHandle& op) {
  const auto& n = op.operator_name();
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

bool is_write(const c10::Argument& a) {
  return a.alias_info() != nullptr && a.alias_info()->isWrite();
}

// Note [Random operators]
// A replay must draw the same numbers as the first run: we save the state
// of the generator the op uses before it runs and, on replay, swap it in and
// restore the current state afterwards, so replays never perturb the
// program's random stream. Ops without a Generator argument that still draw
// from the default generator are listed by name.
bool is_random(const c10::FunctionSchema& schema) {
  static const std::unordered_set<std::string> kNames = {
      "aten::native_dropout", "aten::rand_like",       "aten::randn_like",
      "aten::randint_like",   "aten::bernoulli",       "aten::bernoulli_",
      "aten::normal",         "aten::normal_",         "aten::uniform_",
      "aten::multinomial",    "aten::poisson",         "aten::exponential_",
      "aten::random_",        "aten::rrelu_with_noise"};
  if (kNames.count(schema.name()) != 0) return true;
  for (const auto& a : schema.arguments()) {
    if (a.type()->str().find("Generator") != std::string::npos) return true;
  }
  return false;
}

namespace {

// Operators that replace a tensor's storage in place.
bool replaces_storage(const c10::FunctionSchema& schema) {
  static const std::unordered_set<std::string> kUnsupported = {
      "aten::set_",          "aten::resize_",       "aten::resize_as_",
      "aten::record_stream", "aten::share_memory_", "aten::_coalesced_"};
  return kUnsupported.count(schema.name()) != 0;
}

}  // namespace

void check_supported(const c10::FunctionSchema& schema,
                     const std::string& name) {
  if (replaces_storage(schema)) {
    throw UnsupportedOperator(detail::concat(
        "[dtr] ", name,
        " is not supported on checkpointed tensors (it changes a tensor's "
        "storage in place); call dtr::pt::decheckpoint() first"));
  }
}

OpRules rules_of(const c10::OperatorHandle& op) {
  const c10::FunctionSchema& schema = op.schema();
  OpRules r;
  r.id = op.operator_name();
  r.name = op_name(op);
  r.unsupported = replaces_storage(schema);
  r.random = is_random(schema);
  const std::string& n = schema.name();
  using Route = OpRules::Route;
  if (n == "aten::detach_") {
    r.route = Route::kDetach;
  } else if (n == "aten::unsafe_split" ||
             n == "aten::unsafe_split_with_sizes") {
    r.route = Route::kUnsafeSplit;
  } else if ((r.view = out_of_place_view(schema))) {
    r.route = Route::kInPlaceView;
  } else if (n == "aten::rrelu_with_noise" || n == "aten::rrelu_with_noise_") {
    r.route = Route::kRreluWithNoise;
  } else if (n == "aten::_to_copy") {
    r.route = Route::kToCopy;
    if (auto i = schema.argumentIndexWithName("device")) r.device_arg = *i;
  }
  return r;
}

// Note [In-place view operators]
// `x.as_strided_(...)`, `x.transpose_(0, 1)` and friends change only the
// metadata of x: they are the view operator applied to x, with x's handle
// then pointing at the view. The view is an alias in the runtime, replayed
// like any other view, so channels_last outputs (adaptive_avg_pool2d
// restrides its result with as_strided_) stay checkpointed values.
std::optional<c10::OperatorHandle> out_of_place_view(
    const c10::FunctionSchema& schema) {
  static const std::unordered_map<std::string,
                                  std::pair<const char*, const char*>>
      kViews = {{"aten::as_strided_", {"aten::as_strided", ""}},
                {"aten::transpose_", {"aten::transpose", "int"}},
                {"aten::t_", {"aten::t", ""}},
                {"aten::squeeze_", {"aten::squeeze", ""}},
                {"aten::squeeze_.dim", {"aten::squeeze", "dim"}},
                {"aten::unsqueeze_", {"aten::unsqueeze", ""}},
                {"aten::swapdims_", {"aten::swapdims", ""}},
                {"aten::swapaxes_", {"aten::swapaxes", ""}}};
  std::string key = schema.name();
  if (!schema.overload_name().empty()) key += "." + schema.overload_name();
  auto it = kViews.find(key);
  if (it == kViews.end()) return std::nullopt;
  return c10::Dispatcher::singleton().findSchemaOrThrow(it->second.first,
                                                        it->second.second);
}

// Note [Metadata results]
// Some results are not values but descriptions of other results, read
// through their data pointer by the ops that take them (a PackedSequence's
// batch_sizes, read by lstm/gru): they stay plain tensors.
bool is_metadata_result(const c10::FunctionSchema& schema, std::size_t r) {
  return schema.name() == "aten::_pack_padded_sequence" && r == 1;
}

std::vector<int> hidden_writes(const c10::FunctionSchema& schema,
                               c10::ArrayRef<c10::IValue> args) {
  std::vector<int> out;
  if (schema.name() == "aten::native_batch_norm" && args[5].toBool()) {
    for (int i : {3, 4}) {
      if (args[i].isTensor() && args[i].toTensor().defined()) out.push_back(i);
    }
  }
  return out;
}

}  // namespace dtr::pt
