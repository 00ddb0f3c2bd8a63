#pragma once
/// What the kernel must know about an operator beyond its schema: the
/// tables of special cases, in one place. Pure functions of the schema
/// (and for batch norm, of its arguments); no state.
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
                               const std::vector<c10::IValue>& args);

}  // namespace dtr::pt
