// Tests of the table of special operators (dtr/torch/op_rules.h): every
// row names an operator this PyTorch registers (a renamed operator in a new
// release would silently lose its rule), and the rules the kernel works
// out carry each row's traits.
#include "dtr/torch/op_rules.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

namespace {

namespace pt = dtr::pt;

// The registered operators a row matches: its overload, or every overload
// when it names none.
std::vector<c10::OperatorHandle> matches(const std::string& row) {
  std::vector<c10::OperatorHandle> out;
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const auto& name : dispatcher.getAllOpNames()) {
    const std::string full = name.overload_name.empty()
                                 ? name.name
                                 : name.name + "." + name.overload_name;
    if (full != row && name.name != row) continue;
    if (auto op = dispatcher.findOp(name)) out.push_back(*op);
  }
  return out;
}

TEST(OpRulesTest, EveryRowNamesARegisteredOperator) {
  for (const std::string& row : pt::special_op_names()) {
    const auto ops = matches(row);
    EXPECT_FALSE(ops.empty()) << row << " is not a registered operator";
    for (const auto& op : ops) {
      EXPECT_NO_THROW(pt::rules_of(op)) << pt::op_name(op);
    }
  }
}

TEST(OpRulesTest, RulesCarryTheRowsTraits) {
  auto& d = c10::Dispatcher::singleton();
  using Route = pt::OpRules::Route;
  EXPECT_TRUE(
      pt::rules_of(d.findSchemaOrThrow("aten::resize_", "")).unsupported);
  EXPECT_TRUE(
      pt::rules_of(d.findSchemaOrThrow("aten::native_dropout", "")).random);
  // Found by its Generator argument, not by a row.
  EXPECT_TRUE(
      pt::rules_of(d.findSchemaOrThrow("aten::randn", "generator")).random);
  EXPECT_FALSE(pt::rules_of(d.findSchemaOrThrow("aten::add", "Tensor")).random);
  const auto bn =
      pt::rules_of(d.findSchemaOrThrow("aten::native_batch_norm", ""));
  EXPECT_TRUE(bn.running_stats);
  const auto pack =
      pt::rules_of(d.findSchemaOrThrow("aten::_pack_padded_sequence", ""));
  EXPECT_EQ(pack.metadata_result, 1u);
  // An in-place view's rules name its out-of-place counterpart; an overload
  // without a row of its own takes the general path.
  const auto t = pt::rules_of(d.findSchemaOrThrow("aten::transpose_", ""));
  ASSERT_EQ(t.route, Route::kInPlaceView);
  EXPECT_EQ(pt::op_name(*t.view), "aten::transpose.int");
  const auto sq = pt::rules_of(d.findSchemaOrThrow("aten::squeeze_", "dims"));
  EXPECT_EQ(sq.route, Route::kNone);
  EXPECT_EQ(pt::rules_of(d.findSchemaOrThrow("aten::_to_copy", "")).route,
            Route::kToCopy);
}

}  // namespace
