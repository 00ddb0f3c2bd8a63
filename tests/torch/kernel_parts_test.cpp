// Tests of the kernel's steps that read only one call's records
// (dtr/torch/kernel_parts.h): which results become new values, which are
// views of an input, which stay plain, and how in-place results return.
#include "dtr/torch/kernel_parts.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <memory>

#include "dtr/torch/dtr_torch.h"

namespace {

using dtr::pt::Args;
using dtr::pt::Cell;
using dtr::pt::MutationPlan;
using dtr::pt::OpRules;
using dtr::pt::Outputs;
using dtr::pt::Slots;

const c10::FunctionSchema& schema_of(const char* name, const char* overload) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow(name, overload)
      .schema();
}

class KernelPartsTest : public ::testing::Test {
 protected:
  // One slot holding `value`: checkpointed (with a cell of runtime id
  // `id`, outside any context: Note [Fork]) or plain.
  void add_slot(const at::Tensor& value, bool checkpointed, int id = 0) {
    std::shared_ptr<Cell> cell;
    if (checkpointed) {
      cell = std::make_shared<Cell>();
      cell->id = static_cast<dtr::TensorId>(id);
      cell->fork_generation = dtr::pt::current_fork_generation() + 1;
      slots_.input.push_back(static_cast<int>(slots_.ids.size()));
      slots_.ids.push_back(cell->id);
    } else {
      slots_.input.push_back(-1);
    }
    slots_.cells.push_back(cell);
    slots_.arg.push_back(static_cast<int>(slots_.values.size()));
    slots_.values.push_back(value);
  }
  Outputs classify(const c10::FunctionSchema& schema,
                   std::initializer_list<c10::IValue> results,
                   const Args& args = {}) {
    Outputs out;
    out.results.assign(results.begin(), results.end());
    dtr::pt::classify_results(schema, rules_, args, plan_, slots_, out);
    return out;
  }

  Slots slots_;
  OpRules rules_;
  MutationPlan plan_;
};

TEST_F(KernelPartsTest, AResultInANewStorageIsANewValueOfItsBytes) {
  const at::Tensor x = at::ones({4, 8});
  add_slot(x, true);
  const Outputs out = classify(schema_of("aten::relu", ""), {at::relu(x)});
  ASSERT_EQ(out.specs.size(), 1u);
  EXPECT_EQ(out.specs[0].bytes, 4 * 8 * 4);
  EXPECT_EQ(out.specs[0].alias_of, -1);
  EXPECT_EQ(out.new_bytes, 4 * 8 * 4);
  EXPECT_EQ(out.result_map, (c10::SmallVector<int, 2>{0}));
}

TEST_F(KernelPartsTest, AResultInACheckpointedInputsStorageIsItsView) {
  const at::Tensor plain = at::ones({2});
  const at::Tensor x = at::ones({4, 8});
  add_slot(plain, false);
  add_slot(x, true);
  const Outputs out = classify(schema_of("aten::view", ""), {x.view({32})});
  ASSERT_EQ(out.specs.size(), 1u);
  EXPECT_EQ(out.specs[0].bytes, 0);
  EXPECT_EQ(out.specs[0].alias_of, 0);  // the first checkpointed input
  EXPECT_EQ(out.new_bytes, 0);
}

TEST_F(KernelPartsTest, AResultInAPlainInputsStorageStaysPlain) {
  const at::Tensor x = at::ones({4, 8});
  add_slot(x, false);
  const Outputs out = classify(schema_of("aten::view", ""), {x.view({32})});
  EXPECT_TRUE(out.specs.empty());
  EXPECT_EQ(out.result_map, (c10::SmallVector<int, 2>{-1}));
}

TEST_F(KernelPartsTest, TheMetadataResultStaysPlain) {
  const at::Tensor x = at::ones({4, 8});
  add_slot(x, true);
  rules_.metadata_result = 1;
  const auto [values, indices] = at::max(x, 1);
  const Outputs out =
      classify(schema_of("aten::max", "dim"), {values, indices});
  ASSERT_EQ(out.specs.size(), 1u);
  EXPECT_EQ(out.result_map, (c10::SmallVector<int, 2>{0, -1}));
}

TEST_F(KernelPartsTest, TwoResultsInOneNewStorageAreRefused) {
  const at::Tensor x = at::ones({4, 8});
  add_slot(x, true);
  const at::Tensor fresh = at::zeros({8});
  rules_.name = "aten::max.dim";
  try {
    classify(schema_of("aten::max", "dim"),
             {fresh.narrow(0, 0, 4), fresh.narrow(0, 4, 4)});
    FAIL() << "two results in one new storage were accepted";
  } catch (const dtr::pt::UnsupportedOperator& e) {
    EXPECT_NE(std::string(e.what()).find("aten::max.dim: two results share"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(KernelPartsTest, AnInPlaceResultIsNewUnlessWrittenDirectly) {
  const at::Tensor w = dtr::pt::checkpoint(at::ones({4}));
  const at::Tensor value = dtr::pt::decheckpoint(w);
  add_slot(value, true);
  const Args args{w, at::ones({4}), c10::IValue(1)};
  const auto& add_ = schema_of("aten::add_", "Tensor");
  plan_.direct = false;
  Outputs out = classify(add_, {value}, args);
  EXPECT_EQ(out.inplace_arg, (c10::SmallVector<int, 2>{0}));
  ASSERT_EQ(out.specs.size(), 1u);
  EXPECT_EQ(out.specs[0].bytes, 16);
  plan_.direct = true;
  out = classify(add_, {value}, args);
  EXPECT_TRUE(out.specs.empty());
  EXPECT_EQ(out.result_map, (c10::SmallVector<int, 2>{-1}));
}

TEST_F(KernelPartsTest, SlotsListCheckpointedInputsAndSkipHiddenWrites) {
  const at::Tensor a = dtr::pt::checkpoint(at::ones({2}));
  const at::Tensor b = at::ones({2});
  const Args args{a, c10::List<at::Tensor>({b, a}), b};
  plan_.stripped = {2};
  const Slots s = dtr::pt::collect_slots(args, plan_);
  ASSERT_EQ(s.cells.size(), 3u);  // a, then the list's b and a
  EXPECT_EQ(s.arg, (c10::SmallVector<int, 4>{0, 1, 1}));
  EXPECT_EQ(s.input, (c10::SmallVector<int, 4>{0, -1, 1}));
  ASSERT_EQ(s.ids.size(), 2u);
  EXPECT_EQ(s.ids[0], s.ids[1]);
  EXPECT_EQ(s.cells[1], nullptr);
  EXPECT_EQ(s.values.size(), 3u);
}

}  // namespace
