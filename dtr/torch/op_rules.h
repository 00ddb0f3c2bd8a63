#pragma once
/// What the kernel must know about an operator beyond its schema: one table
/// of special operators (op_rules.cpp, kSpecialOps), each row an operator's
/// name beside what is special about it and, for those not recorded as one
/// call of themselves, the route to its handler (special_ops.cpp). The
/// kernel works an operator's rules out once, at its first call
/// (OpRulesCache), since it runs on every call.
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dtr::pt {

/// "aten::add_.Tensor".
std::string op_name(const c10::OperatorHandle& op);

/// The argument or return is written in place (schema `(a!)`).
bool is_write(const c10::Argument& a);

/// The special cases of one operator.
struct OpRules {
  /// How SpecialOps::route handles the operator (special_ops.h).
  enum class Route {
    kNone,            ///< the general path
    kDetach,          ///< detach_: autograd metadata only
    kUnsafeSplit,     ///< Note [unsafe_split]
    kInPlaceView,     ///< Note [In-place view operators]
    kRreluWithNoise,  ///< Note [rrelu's noise]
    kToCopy,          ///< _to_copy: plain when it names a device
  };
  c10::OperatorName id{"", ""};  ///< the operator these rules are for
  std::string name;              ///< "aten::add_.Tensor"
  /// It replaces a tensor's storage in place, which a checkpointed value
  /// cannot express: refused (check_supported).
  bool unsupported = false;
  /// It draws random numbers (Note [Random operators]).
  bool random = false;
  /// In training mode it writes batch norm's running statistics, which its
  /// schema does not mark (hidden_writes).
  bool running_stats = false;
  /// Note [Metadata results]: this result stays a plain tensor.
  std::optional<std::size_t> metadata_result;
  Route route = Route::kNone;
  std::optional<c10::OperatorHandle> view;  ///< kInPlaceView: the view op
  std::optional<int> device_arg;            ///< kToCopy: the device argument
};
OpRules rules_of(const c10::OperatorHandle& op);

/// Each operator's rules, worked out at its first call.
class OpRulesCache {
 public:
  const OpRules& of(const c10::OperatorHandle& op);

 private:
  // By schema address, which is stable while the operator is registered;
  // OpRules::id catches an address reused by another operator.
  std::unordered_map<const c10::FunctionSchema*, OpRules> rules_;
};

/// The names of kSpecialOps' rows, in order (for tests: each must name an
/// operator this PyTorch has).
std::vector<std::string> special_op_names();

/// Throws UnsupportedOperator if `rules` say the operator is refused.
void check_supported(const OpRules& rules);

/// Arguments the schema does not mark as written but the kernel writes
/// (batch norm's running statistics in training mode). They are treated as
/// written and passed as None when the operator is replayed.
std::vector<int> hidden_writes(const OpRules& rules,
                               c10::ArrayRef<c10::IValue> args);

}  // namespace dtr::pt
