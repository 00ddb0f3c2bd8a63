// Tests of WritePlanner's rules (dtr/torch/write_planner.h) on graphs built
// by hand: how a write into a checkpointed value is carried out depends on
// who else reads its storage (the program's views, lineage) and on who
// holds the value. The kernel's use of a plan is tested end to end in
// tests/torch/test_dtr.py and test_program_buffers.py.
#include "dtr/torch/write_planner.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace {

using dtr::kNoId;
using dtr::OpId;
using dtr::StorageId;
using dtr::TensorId;
using dtr::pt::Cell;
using dtr::pt::Mutation;
using dtr::pt::Remat;

class WritePlannerTest : public ::testing::Test {
 protected:
  // A value made by an op of its own: in a new storage, or a view in `s`.
  TensorId add_value(StorageId s = kNoId) {
    const bool view = s != kNoId;
    if (!view) s = graph_.add_storage();
    const OpId op = graph_.add_op();
    const TensorId t = graph_.add_tensor();
    graph_.op(op).outputs.push_back(t);
    graph_.tensor(t).op = op;
    graph_.tensor(t).storage = s;
    graph_.tensor(t).is_alias = view;
    graph_.storage(s).tensors.push_back(t);
    return t;
  }
  StorageId storage(TensorId t) const { return graph_.tensor(t).storage; }

  // The cell of `t`, with `handles` program handles. Its records live
  // outside any context: their deaths concern none (Note [Fork]).
  // The fixture keeps the only reference.
  Cell& add_cell(TensorId t, int handles) {
    auto c = std::make_shared<Cell>();
    c->id = t;
    c->handles = handles;
    c->fork_generation = dtr::pt::current_fork_generation() + 1;
    cells_.set(t, c.get());
    kept_.push_back(c);
    return *c;
  }
  std::shared_ptr<Remat> make_remat() {
    auto r = std::make_shared<Remat>(
        c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor"));
    r->fork_generation = dtr::pt::current_fork_generation() + 1;
    remats_kept_.push_back(r);
    return r;
  }
  // A live rematerializer for `consumer`'s op, which reads `input`.
  void add_lineage(TensorId input, TensorId consumer) {
    const OpId op = graph_.tensor(consumer).op;
    graph_.tensor(input).consumers.push_back(op);
    graph_.op(op).inputs.push_back(input);
    remats_.set(op, make_remat().get());
  }
  Mutation classify(TensorId t, const at::Tensor& wrapper = at::zeros({2})) {
    return planner_.classify(wrapper, *cells_.find(t));
  }

  dtr::Graph graph_;
  dtr::pt::CellTable cells_;
  dtr::pt::RematTable remats_;
  dtr::pt::SharedBuffers shared_;
  dtr::pt::WritePlanner planner_{graph_, cells_, remats_, shared_};
  std::vector<std::shared_ptr<Cell>> kept_;
  std::vector<std::shared_ptr<Remat>> remats_kept_;
};

TEST_F(WritePlannerTest, AValueOnlyTheProgramHoldsIsMovedIfRecomputable) {
  const TensorId t = add_value();
  Cell& cell = add_cell(t, 1);
  EXPECT_EQ(classify(t), Mutation::kDirect);
  cell.remat = make_remat();
  EXPECT_EQ(classify(t), Mutation::kMove);
}

TEST_F(WritePlannerTest, AValueLineageAlsoReadsIsCopiedWhenAutogradSavedIt) {
  const TensorId t = add_value();
  Cell& cell = add_cell(t, 1);
  const auto lineage_ref = kept_.back();  // a Remat's input list, say
  at::Tensor in_graph = at::zeros({2}).requires_grad_();
  EXPECT_EQ(classify(t, in_graph), Mutation::kCopyOnWrite);
  EXPECT_EQ(classify(t), Mutation::kCopyOnWrite);
  // Two program handles and nothing else: written in place, no autograd.
  cell.handles = 2;
  EXPECT_EQ(classify(t), Mutation::kDirect);
  EXPECT_EQ(classify(t, in_graph), Mutation::kCopyOnWrite);
}

TEST_F(WritePlannerTest, AViewOrASiblingOnlyLineageReadsIsCopied) {
  const TensorId base = add_value();
  const TensorId view = add_value(storage(base));
  add_cell(base, 0);
  add_cell(view, 1);
  EXPECT_EQ(classify(view), Mutation::kCopyOnWrite);  // an alias
  const TensorId other = add_value();
  const TensorId other_view = add_value(storage(other));
  add_cell(other, 1);
  add_cell(other_view, 0);  // a sibling the program does not hold
  EXPECT_EQ(classify(other), Mutation::kCopyOnWrite);
}

TEST_F(WritePlannerTest, ViewsTheProgramHoldsSeeTheWriteUnlessLineageCopied) {
  const TensorId base = add_value();
  const TensorId view = add_value(storage(base));
  add_cell(base, 1);
  add_cell(view, 1);
  EXPECT_EQ(classify(base), Mutation::kSharedViews);
  // Lineage that reads the storage into the same storage (another view)
  // is rebuilt from it: still in place.
  const TensorId view2 = add_value(storage(base));
  add_lineage(base, view2);
  EXPECT_EQ(classify(base), Mutation::kSharedViews);
  // Lineage that read it into another storage would replay from the new
  // contents: the storage is copied first.
  const TensorId derived = add_value();
  add_lineage(view, derived);
  EXPECT_EQ(classify(base), Mutation::kShared);
}

TEST_F(WritePlannerTest, LineageReadsAStorageThroughAnyOfItsValues) {
  const TensorId base = add_value();
  const TensorId view = add_value(storage(base));
  const TensorId derived = add_value();
  EXPECT_FALSE(planner_.lineage_reads_storage(base));
  graph_.tensor(view).consumers.push_back(graph_.tensor(derived).op);
  EXPECT_FALSE(planner_.lineage_reads_storage(base));  // no live Remat
  remats_.set(graph_.tensor(derived).op, make_remat().get());
  EXPECT_TRUE(planner_.lineage_reads_storage(base));
  EXPECT_TRUE(planner_.lineage_reads_storage(view));
  EXPECT_FALSE(planner_.lineage_reads_storage(derived));
}

TEST_F(WritePlannerTest, AValueIsProgramVisibleByItsOwnBufferOrItsStorage) {
  const TensorId a = add_value();
  const TensorId view = add_value(storage(a));
  const Cell& cell = add_cell(a, 1);
  Cell& view_cell = add_cell(view, 1);
  EXPECT_FALSE(planner_.program_visible(cell));
  view_cell.external = at::zeros({2});  // a tensor given to checkpoint()
  EXPECT_TRUE(planner_.program_visible(view_cell));
  EXPECT_FALSE(planner_.program_visible(cell));
  shared_.add_visible(storage(a), nullptr);
  EXPECT_TRUE(planner_.program_visible(cell));
  shared_.remove_visible(storage(a), nullptr);
  EXPECT_FALSE(planner_.program_visible(cell));
}

}  // namespace
