#include "dtr/torch/op_rules.h"

#include <string_view>

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

namespace {

using Route = OpRules::Route;

enum Trait : unsigned {
  kNoTrait = 0,
  kReplacesStorage = 1,  ///< refused (OpRules::unsupported)
  kRandom = 2,           ///< Note [Random operators]
  kRunningStats = 4,     ///< batch norm's hidden writes
  kMetadataResult1 = 8,  ///< Note [Metadata results]: result 1
};

// One row per special operator. `name` without an overload matches every
// overload; with one ("aten::squeeze_.dim"), or where `exact` is set, only
// that one. An in-place view names its out-of-place counterpart, which
// takes the same arguments.
struct SpecialOp {
  std::string_view name;
  unsigned traits = kNoTrait;
  Route route = Route::kNone;
  const char* view = nullptr;  ///< kInPlaceView: the view's name
  const char* view_overload = "";
  bool exact = false;
};

// clang-format off
constexpr SpecialOp kSpecialOps[] = {
    // Not recorded as one call of themselves (special_ops.cpp).
    {"aten::detach_", kNoTrait, Route::kDetach},
    {"aten::unsafe_split", kNoTrait, Route::kUnsafeSplit},
    {"aten::unsafe_split_with_sizes", kNoTrait, Route::kUnsafeSplit},
    {"aten::rrelu_with_noise", kRandom, Route::kRreluWithNoise},
    {"aten::rrelu_with_noise_", kRandom, Route::kRreluWithNoise},
    {"aten::_to_copy", kNoTrait, Route::kToCopy},
    {"aten::as_strided_", kNoTrait, Route::kInPlaceView, "aten::as_strided", "", true},
    {"aten::transpose_", kNoTrait, Route::kInPlaceView, "aten::transpose", "int", true},
    {"aten::t_", kNoTrait, Route::kInPlaceView, "aten::t", "", true},
    {"aten::squeeze_", kNoTrait, Route::kInPlaceView, "aten::squeeze", "", true},
    {"aten::squeeze_.dim", kNoTrait, Route::kInPlaceView, "aten::squeeze", "dim"},
    {"aten::unsqueeze_", kNoTrait, Route::kInPlaceView, "aten::unsqueeze", "", true},
    {"aten::swapdims_", kNoTrait, Route::kInPlaceView, "aten::swapdims", "", true},
    {"aten::swapaxes_", kNoTrait, Route::kInPlaceView, "aten::swapaxes", "", true},
    // Replace a tensor's storage in place: refused.
    {"aten::set_", kReplacesStorage},
    {"aten::resize_", kReplacesStorage},
    {"aten::resize_as_", kReplacesStorage},
    {"aten::record_stream", kReplacesStorage},
    {"aten::_coalesced_", kReplacesStorage},
    // Draw from the default generator without a Generator argument.
    {"aten::native_dropout", kRandom},
    {"aten::rand_like", kRandom},
    {"aten::randn_like", kRandom},
    {"aten::randint_like", kRandom},
    {"aten::bernoulli", kRandom},
    {"aten::bernoulli_", kRandom},
    {"aten::normal", kRandom},
    {"aten::normal_", kRandom},
    {"aten::uniform_", kRandom},
    {"aten::multinomial", kRandom},
    {"aten::poisson", kRandom},
    {"aten::exponential_", kRandom},
    {"aten::random_", kRandom},
    // Write or return what the schema does not say.
    {"aten::native_batch_norm", kRunningStats},
    {"aten::_pack_padded_sequence", kMetadataResult1},
};
// clang-format on

const SpecialOp* find_special(const c10::OperatorName& id) {
  const std::string full =
      id.overload_name.empty() ? id.name : id.name + "." + id.overload_name;
  const SpecialOp* any_overload = nullptr;
  for (const SpecialOp& row : kSpecialOps) {
    if (row.name == full) return &row;
    if (row.name == id.name && !row.exact) any_overload = &row;
  }
  return any_overload;
}

// Note [Metadata results]
// Some results are not values but descriptions of other results, read
// through their data pointer by the ops that take them (a PackedSequence's
// batch_sizes, read by lstm/gru): they stay plain tensors.

// Note [Random operators]
// A replay must draw the same numbers as the first run: the kernel saves
// the state of the generator the op uses before it runs and, on replay,
// swaps it in and restores the current state afterwards, so replays never
// perturb the program's random stream. Ops without a Generator argument
// that still draw from the default generator are rows of kSpecialOps.
bool takes_generator(const c10::FunctionSchema& schema) {
  for (const auto& a : schema.arguments()) {
    if (a.type()->str().find("Generator") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

OpRules rules_of(const c10::OperatorHandle& op) {
  const c10::FunctionSchema& schema = op.schema();
  OpRules r;
  r.id = op.operator_name();
  r.name = op_name(op);
  r.random = takes_generator(schema);
  const SpecialOp* row = find_special(r.id);
  if (row == nullptr) return r;
  r.unsupported = (row->traits & kReplacesStorage) != 0;
  r.random = r.random || (row->traits & kRandom) != 0;
  r.running_stats = (row->traits & kRunningStats) != 0;
  if ((row->traits & kMetadataResult1) != 0) r.metadata_result = 1;
  r.route = row->route;
  if (row->view != nullptr) {
    r.view = c10::Dispatcher::singleton().findSchemaOrThrow(row->view,
                                                            row->view_overload);
  }
  if (r.route == Route::kToCopy) {
    if (auto i = schema.argumentIndexWithName("device")) r.device_arg = *i;
  }
  return r;
}

const OpRules& OpRulesCache::of(const c10::OperatorHandle& op) {
  auto it = rules_.find(&op.schema());
  if (it != rules_.end() && it->second.id == op.operator_name()) {
    return it->second;
  }
  return rules_.insert_or_assign(&op.schema(), rules_of(op)).first->second;
}

std::vector<std::string> special_op_names() {
  std::vector<std::string> names;
  for (const SpecialOp& row : kSpecialOps) names.emplace_back(row.name);
  return names;
}

void check_supported(const OpRules& rules) {
  if (!rules.unsupported) return;
  throw UnsupportedOperator(detail::concat(
      "[dtr] ", rules.name,
      " is not supported on checkpointed tensors (it changes a tensor's "
      "storage in place); call dtr::pt::decheckpoint() first"));
}

std::vector<int> hidden_writes(const OpRules& rules,
                               c10::ArrayRef<c10::IValue> args) {
  std::vector<int> out;
  if (rules.running_stats && args[5].toBool()) {  // training
    for (int i : {3, 4}) {                        // running_mean, running_var
      if (args[i].isTensor() && args[i].toTensor().defined()) out.push_back(i);
    }
  }
  return out;
}

}  // namespace dtr::pt
