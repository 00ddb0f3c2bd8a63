#include "dtr/plan/static_graph.h"

#include <gtest/gtest.h>

#include "dtr/core/error.h"
#include "dtr/plan/schedule.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "plan/plan_fixtures.h"

namespace dtr::plan {
namespace {

using testing::TraceText;

TEST(StaticGraphTest, AliasCollapsesOntoItsStorage) {
  StaticGraph g = TraceText()
                      .constant("w", 8)
                      .call("f", {"w"}, {{"a", 100}}, 10)
                      .call("view", {"a"}, {{"v", 100, 0}}, 3)
                      .call("g", {"v", "w"}, {{"b", 40}}, 20)
                      .graph();
  ASSERT_EQ(g.size(), 2u);  // the view is no node
  EXPECT_EQ(g.nodes[0].name, "f");
  EXPECT_EQ(g.nodes[0].cost_ns, 13);  // the view's cost is folded in
  EXPECT_EQ(g.nodes[0].bytes, 100);
  EXPECT_EQ(g.nodes[1].deps, std::vector<NodeId>{0});  // via the view
  EXPECT_EQ(g.users[0], std::vector<NodeId>{1});
  EXPECT_EQ(g.constant_bytes, 8);
  EXPECT_EQ(g.baseline_cost_ns(), 33);
}

TEST(StaticGraphTest, ViewOfAConstantIsFixedCost) {
  StaticGraph g = TraceText()
                      .constant("w", 8)
                      .call("t", {"w"}, {{"wt", 8, 0}}, 2)
                      .call("mm", {"wt"}, {{"y", 16}}, 5)
                      .graph();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(g.nodes[0].deps.empty());  // constants are not decided on
  EXPECT_EQ(g.fixed_cost_ns, 2);
  EXPECT_EQ(g.baseline_cost_ns(), 7);
}

TEST(StaticGraphTest, MultiOutputOperatorIsOneNode) {
  StaticGraph g = TraceText()
                      .constant("x", 8)
                      .call("split", {"x"}, {{"p", 30}, {"q", 50}}, 10)
                      .call("use_q", {"q"}, {{"r", 5}}, 1)
                      .call("use_p", {"p", "r"}, {{"s", 5}}, 1)
                      .graph();
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.nodes[0].bytes, 80);
  EXPECT_EQ(g.nodes[1].deps, std::vector<NodeId>{0});
  EXPECT_EQ(g.nodes[2].deps, (std::vector<NodeId>{0, 1}));
}

TEST(StaticGraphTest, MixedAliasAndNewOutputsCountOnlyNewBytes) {
  StaticGraph g = TraceText()
                      .constant("x", 8)
                      .call("f", {"x"}, {{"a", 100}}, 1)
                      .call("both", {"a"}, {{"av", 100, 0}, {"n", 30}}, 1)
                      .call("g", {"av"}, {{"b", 10}}, 1)
                      .graph();
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.nodes[1].bytes, 30);
  EXPECT_EQ(g.nodes[2].deps, std::vector<NodeId>{0});  // av is a's storage
}

TEST(StaticGraphTest, ValuesLeftAtTheEndAreOutputs) {
  StaticGraph g = TraceText()
                      .constant("x", 8)
                      .call("f", {"x"}, {{"a", 10}}, 1)
                      .call("g", {"a"}, {{"b", 10}}, 1)
                      .call("h", {"b"}, {{"c", 10}, {"cv", 10, 0}}, 1)
                      .release("a")
                      .release("b")
                      .graph();
  // cv views b: b's storage is still referenced, a's is not.
  EXPECT_EQ(g.outputs, (std::vector<bool>{false, true, true}));
}

TEST(StaticGraphTest, BuiltInModelsAreTopologicalAndKeepTheirCompute) {
  for (const char* spec : {"model:chain?depth=12", "model:resnet?depth=8",
                           "model:lstm?depth=4", "model:transformer?depth=1"}) {
    sim::NamedProgram p = sim::load_program(spec);
    StaticGraph g = build_static_graph(p.program);
    ASSERT_GT(g.size(), 0u) << spec;
    for (NodeId i = 0; i < g.size(); ++i) {
      for (NodeId d : g.nodes[i].deps) {
        ASSERT_LT(d, i) << spec << " node " << i;
      }
    }
    // One evaluation of every node is the trace's own compute.
    EXPECT_EQ(g.baseline_cost_ns(), sim::compute_baseline(p.program).compute_ns)
        << spec;
    EXPECT_EQ(g.constant_bytes, sim::compute_baseline(p.program).constant_bytes)
        << spec;
  }
}

// The trace's own order, replayed on the graph, must use the memory the
// simulator measures: equal without multi-output operators, more with them
// (their outputs are merged and live together).
TEST(StaticGraphTest, TraceOrderReplaysTheSimulatorsBaseline) {
  struct Case {
    const char* spec;
    bool merged_outputs;
  } cases[] = {
      {"model:chain?depth=12", false},     {"model:lstm?depth=3", false},
      {"model:transformer?depth=1", true},  // dropout, layer norm
      {"model:treelstm?depth=3", false},   {"model:resnet?depth=8", true},
      {"model:unet?depth=1", true}};
  for (const Case& c : cases) {
    trace::Program p = sim::load_program(c.spec).program;
    StaticGraph g = build_static_graph(p);
    sim::Baseline baseline = sim::compute_baseline(p);
    Validation v = validate_schedule(g, trace_order_schedule(p, g),
                                     baseline.peak_bytes * 2);
    ASSERT_TRUE(v.ok) << c.spec << ": " << v.problem;
    EXPECT_EQ(v.compute_ns, baseline.compute_ns) << c.spec;
    if (c.merged_outputs) {
      EXPECT_GE(v.peak_bytes, baseline.peak_bytes) << c.spec;
    } else {
      EXPECT_EQ(v.peak_bytes, baseline.peak_bytes) << c.spec;
    }
  }
}

TEST(StaticGraphTest, ChainModelIsAForwardChainWithABackwardPass) {
  StaticGraph g =
      build_static_graph(sim::load_program("model:chain?depth=5").program);
  std::size_t forward = 0;
  for (const Node& n : g.nodes) forward += n.backward ? 0 : 1;
  EXPECT_EQ(forward, 5u);
  EXPECT_EQ(g.size(), 11u);  // 5 layers, the seed, 5 layer backwards
}

}  // namespace
}  // namespace dtr::plan
