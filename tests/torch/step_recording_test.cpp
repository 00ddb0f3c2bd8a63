// A written step (Note [Written steps]) must be the program that reading
// the step's trace text would give: here the text is written with the
// paper's trace format, as StepRecording did before it built programs
// directly, and both programs are compared field by field.
#include "dtr/torch/step_recording.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/trace/trace_reader.h"
#include "dtr/trace/trace_writer.h"

namespace dtr::pt::testing {
namespace {

// The reference: the same events as trace text, read back.
class TextStep {
 public:
  TextStep() : writer_(text_) { writer_.annotate("START"); }

  void constant(TensorId id, std::int64_t bytes) {
    writer_.constant(define(id), bytes);
    bytes_[id] = bytes;
  }
  void call(const Graph& g, const std::string& op,
            const std::vector<TensorId>& inputs,
            const std::vector<TensorId>& outputs,
            const std::vector<OutputSpec>& specs, std::int64_t cost_ns,
            std::int64_t workspace_bytes) {
    std::vector<std::string> args;
    for (TensorId in : inputs) args.push_back(use(g, in));
    std::vector<trace::TraceWriter::Result> results;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      std::int64_t bytes = specs[i].bytes;
      if (specs[i].alias_of >= 0)
        bytes = bytes_of(g, inputs[specs[i].alias_of]);
      results.push_back({define(outputs[i]), bytes, specs[i].alias_of});
    }
    writer_.call(op, args, results, cost_ns, workspace_bytes);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      bytes_[outputs[i]] =
          specs[i].alias_of >= 0 ? results[i].bytes : specs[i].bytes;
    }
  }
  void release(TensorId id) {
    auto it = names_.find(id);
    if (it == names_.end()) return;
    writer_.release(it->second);
    names_.erase(it);
  }
  trace::Program program() const {
    std::istringstream in(text_.str());
    return trace::read_trace(in, "auto step");
  }

 private:
  std::string define(TensorId id) {
    return names_[id] = "v" + std::to_string(next_++);
  }
  std::int64_t bytes_of(const Graph& g, TensorId id) const {
    auto it = bytes_.find(id);
    if (it != bytes_.end()) return it->second;
    return g.storage(g.tensor(id).storage).bytes;
  }
  std::string use(const Graph& g, TensorId id) {
    auto it = names_.find(id);
    if (it != names_.end()) return it->second;
    std::string name = define(id);
    writer_.constant(name, g.storage(g.tensor(id).storage).bytes);
    return name;
  }

  std::ostringstream text_;
  trace::TraceWriter writer_;
  std::unordered_map<TensorId, std::string> names_;
  std::unordered_map<TensorId, std::int64_t> bytes_;  // made in the step
  std::uint64_t next_ = 0;
};

void expect_same_program(const trace::Program& a, const trace::Program& b) {
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const trace::ProgramOp& x = a.ops[i];
    const trace::ProgramOp& y = b.ops[i];
    SCOPED_TRACE("op " + std::to_string(i) + " " + x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.cost_ns, y.cost_ns);
    EXPECT_EQ(x.workspace_bytes, y.workspace_bytes);
    EXPECT_EQ(x.inputs, y.inputs);
    ASSERT_EQ(x.outputs.size(), y.outputs.size());
    for (std::size_t k = 0; k < x.outputs.size(); ++k) {
      EXPECT_EQ(x.outputs[k].bytes, y.outputs[k].bytes);
      EXPECT_EQ(x.outputs[k].alias_of, y.outputs[k].alias_of);
    }
    EXPECT_EQ(x.first_output, y.first_output);
    EXPECT_EQ(x.constant, y.constant);
    EXPECT_EQ(x.backward, y.backward);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].kind, b.steps[i].kind) << "step " << i;
    EXPECT_EQ(a.steps[i].index, b.steps[i].index) << "step " << i;
  }
  EXPECT_EQ(a.value_count, b.value_count);
  EXPECT_EQ(a.total_cost_ns, b.total_cost_ns);
  EXPECT_EQ(a.constant_count, b.constant_count);
  EXPECT_EQ(a.step_starts, b.step_starts);
  EXPECT_EQ(a.source, b.source);
}

// Random steps: constants, calls with new and aliased outputs reading
// values of the step and values made before it, releases (also of ids
// never seen), ids defined again with and without a release, and a
// backward op part way.
TEST(StepRecordingTest, WritesTheProgramTheTraceTextWouldGive) {
  for (std::uint32_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    Runtime rt({}, make_heuristic("lru"));
    std::vector<TensorId> before;  // made before the step: in the graph
    for (int i = 0; i < 4; ++i) before.push_back(rt.add_constant(64 << i));
    const TensorId base = static_cast<TensorId>(rt.graph().tensor_count());

    StepRecording direct;
    direct.restart(true);
    TextStep text;
    std::vector<TensorId> live(before);
    auto pick = [&] { return live[rng() % live.size()]; };
    for (int e = 0; e < 60; ++e) {
      const TensorId fresh = base + static_cast<TensorId>(rng() % 24);
      switch (rng() % 5) {
        case 0: {
          const std::int64_t bytes = 8 * (1 + rng() % 9);
          direct.constant(fresh, bytes);
          text.constant(fresh, bytes);
          live.push_back(fresh);
          break;
        }
        case 1:
        case 2: {
          std::vector<TensorId> in{pick(), pick()};
          std::vector<TensorId> out{fresh, fresh + 100};
          std::vector<OutputSpec> specs{
              {16 * (1 + std::int64_t(rng() % 5)), -1}, {0, int(rng() % 2)}};
          const std::string name =
              e == 30 ? "mm_backward" : "op" + std::to_string(rng() % 3);
          const std::int64_t cost = rng() % 1000;
          const std::int64_t scratch = rng() % 2 ? 8 * (rng() % 9) : 0;
          direct.call(rt.graph(), name, in, out, specs, cost, scratch);
          text.call(rt.graph(), name, in, out, specs, cost, scratch);
          live.push_back(out[0]);
          live.push_back(out[1]);
          break;
        }
        case 3: {
          const TensorId victim = rng() % 2 ? pick() : fresh + 1000;
          direct.release(victim);
          text.release(victim);
          // Read again, a released value of the step would be one made
          // before it, which the graph does not hold: keep only those.
          if (std::find(before.begin(), before.end(), victim) == before.end()) {
            std::erase(live, victim);
          }
          break;
        }
        default: {  // a single-output call (redefines an id half the time)
          std::vector<TensorId> in{pick()};
          const TensorId out = rng() % 2 ? pick() : fresh;
          std::vector<TensorId> outs{out};
          std::vector<OutputSpec> specs{{24, -1}};
          direct.call(rt.graph(), "relu", in, outs, specs, 7, 0);
          text.call(rt.graph(), "relu", in, outs, specs, 7, 0);
          live.push_back(out);
        }
      }
    }
    expect_same_program(direct.program(), text.program());
  }
}

TEST(StepRecordingTest, ARestartForgetsTheLastStepsValues) {
  Runtime rt({}, make_heuristic("lru"));
  const TensorId held = rt.add_constant(256);
  StepRecording r;
  r.restart(true);
  const std::vector<TensorId> in{held};
  const std::vector<TensorId> out{held + 1};
  const std::vector<OutputSpec> spec{{32, -1}};
  r.call(rt.graph(), "relu", in, out, spec, 5, 0);
  r.restart(true);
  // held + 1 is not a value of this step: reading it would need its size
  // from the graph, so read `held` again instead and check it is a new
  // constant (the previous step's value is not reused).
  r.call(rt.graph(), "relu", in, out, spec, 5, 0);
  const trace::Program p = r.program();
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_TRUE(p.ops[0].constant);
  EXPECT_EQ(p.ops[0].outputs[0].bytes, 256);
  EXPECT_EQ(p.ops[1].inputs, std::vector<trace::ValueId>{0});
  EXPECT_EQ(p.value_count, 2u);
}

TEST(StepRecordingTest, AStepPastTheCapStopsBeingWrittenButIsStillSigned) {
  Runtime rt({}, make_heuristic("lru"));
  const TensorId x = rt.add_constant(64);
  StepRecording r;
  r.restart(true);
  const std::vector<TensorId> in{x};
  const std::vector<OutputSpec> spec{{8, -1}};
  for (std::uint64_t i = 0; i < StepRecording::kMaxWrittenCalls; ++i) {
    const std::vector<TensorId> out{x + 1 + static_cast<TensorId>(i % 4)};
    r.call(rt.graph(), "relu", in, out, spec, 1, 0);
  }
  EXPECT_TRUE(r.writing());
  const std::uint64_t before = r.signature();
  const std::vector<TensorId> out{x + 1};
  r.call(rt.graph(), "relu", in, out, spec, 1, 0);
  EXPECT_FALSE(r.writing());
  EXPECT_NE(r.signature(), before);
  EXPECT_EQ(r.calls(), StepRecording::kMaxWrittenCalls + 1);
}

}  // namespace
}  // namespace dtr::pt::testing
