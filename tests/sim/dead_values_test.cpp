// Note [Forgetting dead values]: on a recorded trace (ANNOTATE
// FORGETS_DEAD) the simulator forgets what the LibTorch layer would:
// values with no handle that no live lineage reads, in a cascade, at a
// hold (PIN) and at a lineage cut; and nothing on a trace without the mark.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "dtr/sim/simulator.h"
#include "dtr/trace/trace_reader.h"

namespace dtr::sim {
namespace {

std::string call(const std::string& op, const std::string& args,
                 const std::string& out, int bytes) {
  return R"({"INSTRUCTION":"CALL","NAME":")" + op + R"(","ARGS":[)" + args +
         R"(],"RESULT":[")" + out + R"("],"TIME":10})" + "\n" +
         R"({"INSTRUCTION":"MEMORY","NAME":")" + out + R"(","MEMORY":")" +
         std::to_string(bytes) + "\"}\n" +
         R"({"INSTRUCTION":"ALIAS","NAME":")" + out + R"(","ALIAS":-1})" + "\n";
}
std::string instr(const std::string& kind, const std::string& name) {
  return R"({"INSTRUCTION":")" + kind + R"(","NAME":")" + name + "\"}\n";
}
std::string annotate(const std::string& what) {
  return R"({"INSTRUCTION":"ANNOTATE","ANNOTATION":")" + what + "\"}\n";
}

SimResult run(const std::string& text, std::int64_t budget) {
  std::istringstream in(text);
  const trace::Program p = trace::read_trace(in, "dead_values_test");
  SimConfig config;
  config.heuristic = "dtr";
  config.budget_bytes = budget;
  config.thrash_limit = 1e9;
  return simulate(p, compute_baseline(p), config);
}

// a -> b -> c, the first two released while c's lineage reads b (and b's
// reads a): alive. Holding c drops its lineage: b dies, then a.
std::string chain_then_hold(bool forgets) {
  return annotate("START") + (forgets ? annotate("FORGETS_DEAD") : "") +
         call("a", "", "x0", 100) + call("b", R"("x0")", "x1", 100) +
         call("c", R"("x1")", "x2", 100) + instr("RELEASE", "x0") +
         instr("RELEASE", "x1") + instr("PIN", "x2");
}

TEST(DeadValuesTest, AHoldEndsLineageAndDeathCascades) {
  const SimResult r = run(chain_then_hold(true), 1000);
  ASSERT_EQ(r.status, SimStatus::kOk) << r.message;
  EXPECT_EQ(r.forgotten_storages, 2u);  // x1, then x0
}

TEST(DeadValuesTest, ATraceWithoutTheMarkForgetsNothing) {
  const SimResult r = run(chain_then_hold(false), 1000);
  ASSERT_EQ(r.status, SimStatus::kOk) << r.message;
  EXPECT_EQ(r.forgotten_storages, 0u);
}

TEST(DeadValuesTest, DeathStopsAtAValueWithAHandle) {
  // x2 dies at its release, then x1 (read only by x2's lineage); x0 still
  // has its handle (the trace's end holds it).
  const std::string text =
      annotate("START") + annotate("FORGETS_DEAD") + call("a", "", "x0", 100) +
      call("b", R"("x0")", "x1", 100) + call("c", R"("x1")", "x2", 100) +
      instr("RELEASE", "x1") + instr("RELEASE", "x2");
  EXPECT_EQ(run(text, 1000).forgotten_storages, 2u);
}

// A lineage cut ends every lineage: x0, released and only read by x1's,
// dies; x1 can no longer be recomputed (its input is gone for good), so it
// stays resident and a 150-byte op no longer fits a 200-byte budget. The
// runtime is stuck the same way; without the mark the simulator would
// evict x1 and predict a run the runtime cannot make. (x2 is released so
// that the trace's end holds only x1: 200 bytes with its input.)
TEST(DeadValuesTest, ACutKillsWhatOnlyLineageKept) {
  auto text = [](bool forgets) {
    return annotate("START") + (forgets ? annotate("FORGETS_DEAD") : "") +
           call("a", "", "x0", 100) + call("b", R"("x0")", "x1", 100) +
           instr("RELEASE", "x0") + annotate("LINEAGE_CUT") +
           call("c", "", "x2", 150) + instr("RELEASE", "x2");
  };
  const SimResult forgets = run(text(true), 200);
  EXPECT_EQ(forgets.forgotten_storages, 1u);
  EXPECT_EQ(forgets.status, SimStatus::kOom) << forgets.message;
  const SimResult keeps = run(text(false), 200);
  EXPECT_EQ(keeps.status, SimStatus::kOk) << keeps.message;
  EXPECT_EQ(keeps.forgotten_storages, 0u);
}

}  // namespace
}  // namespace dtr::sim
