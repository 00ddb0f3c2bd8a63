#include "dtr/plan/static_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
  EXPECT_EQ(g.nodes[0].cost_ns, 10);  // the view's cost is paid once
  EXPECT_EQ(g.fixed_cost_ns, 3);
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

// Each output is a node, kept and freed on its own; the first carries the
// cost and the inputs, the others read it (Note [Static graph]).
TEST(StaticGraphTest, MultiOutputOperatorIsAChainOfNodes) {
  StaticGraph g = TraceText()
                      .constant("x", 8)
                      .call("f", {"x"}, {{"a", 20}}, 2)
                      .call("split", {"a"}, {{"p", 30}, {"q", 50}}, 10)
                      .call("use_q", {"q"}, {{"r", 5}}, 1)
                      .call("use_p", {"p", "r"}, {{"s", 5}}, 1)
                      .graph();
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g.nodes[1].bytes, 30);
  EXPECT_EQ(g.nodes[1].cost_ns, 10);
  EXPECT_EQ(g.nodes[1].deps, std::vector<NodeId>{0});
  EXPECT_EQ(g.nodes[2].bytes, 50);
  EXPECT_EQ(g.nodes[2].cost_ns, 0);
  EXPECT_EQ(g.nodes[2].deps, std::vector<NodeId>{1});
  EXPECT_EQ(g.nodes[1].op, g.nodes[2].op);
  EXPECT_EQ(g.nodes[3].deps, std::vector<NodeId>{2});
  EXPECT_EQ(g.nodes[4].deps, (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(g.baseline_cost_ns(), 14);
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
// One memory model (Note [Static graph]): the trace's own order has the
// simulator's compute and exactly the peak of a simulated run with room to
// spare, multi-output operators (dropout, layer norm, batch norm,
// convolution backward) included, on the built-in models and the shipped
// recorded traces. (The baseline run frees constants the program drops,
// which budgeted runs and the static model keep: its peak may be lower.)
TEST(StaticGraphTest, TraceOrderReplaysTheSimulatorsBaseline) {
  std::vector<std::string> specs = {
      "model:chain?depth=12",      "model:lstm?depth=3",
      "model:transformer?depth=1", "model:treelstm?depth=3",
      "model:resnet?depth=8",      "model:unet?depth=1"};
  for (const char* t : {"mlp", "lstm", "resnet32", "transformer", "unet"}) {
    specs.push_back(std::string(DTR_DATA_DIR) + "/traces/" + t + ".log");
  }
  for (const std::string& spec : specs) {
    trace::Program p = sim::load_program(spec).program;
    StaticGraph g = build_static_graph(p);
    sim::Baseline baseline = sim::compute_baseline(p);
    sim::SimConfig roomy;
    roomy.budget_bytes = baseline.peak_bytes * 4;
    sim::SimResult run = sim::simulate(p, baseline, roomy);
    ASSERT_EQ(run.status, sim::SimStatus::kOk) << spec;
    EXPECT_EQ(run.remat_compute_ns, 0) << spec;
    Validation v = validate_schedule(g, trace_order_schedule(p, g),
                                     baseline.peak_bytes * 4);
    ASSERT_TRUE(v.ok) << spec << ": " << v.problem;
    EXPECT_EQ(v.compute_ns, baseline.compute_ns) << spec;
    EXPECT_EQ(v.peak_bytes, run.peak_bytes) << spec;
    EXPECT_LE(baseline.peak_bytes, run.peak_bytes) << spec;
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
