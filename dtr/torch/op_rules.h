#pragma once
/// What the kernel must know about an operator beyond its schema: the
/// tables of special cases, in one place. Pure functions of the schema
/// (and for batch norm, of its arguments); no state. The per-call checks
/// are gathered in OpRules, which the kernel works out once per operator.
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>
#include <vector>

namespace dtr::pt {

/// "aten::add_.Tensor".
std::string op_name(const c10::OperatorHandle& op);

/// The argument or return is written in place (schema `(a!)`).
bool is_write(const c10::Argument& a);

/// Draws random numbers (see Note [Random operators]).
bool is_random(const c10::FunctionSchema& schema);

/// Throws UnsupportedOperator for operators that replace a tensor's
/// storage, which a checkpointed value cannot express.
void check_supported(const c10::FunctionSchema& schema,
                     const std::string& name);

/// The special cases of one operator, from its schema alone. Working them
/// out compares strings and walks argument types; the kernel does it once
/// per operator and caches the result (Context::rules_for), since it runs
/// on every call.
struct OpRules {
  /// How Context::route_special handles the operator (special_ops.cpp).
  enum class Route {
    kNone,            ///< the general path
    kDetach,          ///< detach_: autograd metadata only
    kUnsafeSplit,     ///< Note [unsafe_split]
    kInPlaceView,     ///< Note [In-place view operators]
    kRreluWithNoise,  ///< rrelu_with_noise(_): writes its noise argument
    kToCopy,          ///< _to_copy: plain when it names a device
  };
  c10::OperatorName id{"", ""};  ///< the operator these rules are for
  std::string name;              ///< "aten::add_.Tensor"
  bool unsupported = false;      ///< check_supported() would throw
  bool random = false;           ///< is_random()
  Route route = Route::kNone;
  std::optional<c10::OperatorHandle> view;  ///< kInPlaceView: the view op
  std::optional<int> device_arg;            ///< kToCopy: the device argument
};
OpRules rules_of(const c10::OperatorHandle& op);

/// For an in-place view operator (`as_strided_`, `transpose_`, ...): its
/// out-of-place counterpart, which takes the same arguments.
std::optional<c10::OperatorHandle> out_of_place_view(
    const c10::FunctionSchema& schema);

/// Arguments the schema does not mark as written but the kernel writes:
/// batch norm's running statistics in training mode. They are treated as
/// mutated and passed as None when the operator is replayed.
/// Note [Metadata results]: result `r` of the op stays a plain tensor.
bool is_metadata_result(const c10::FunctionSchema& schema, std::size_t r);
std::vector<int> hidden_writes(const c10::FunctionSchema& schema,
                               c10::ArrayRef<c10::IValue> args);

}  // namespace dtr::pt
