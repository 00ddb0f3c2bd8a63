// Tests of the trace writer (dtr/trace/trace_writer.h): the lines it writes are
// byte-for-byte the paper's log format (keys sorted, numbers as strings
// except MUTATE's index list; docs/trace-format.md), and what it writes reads
// back into the same Program.
#include "dtr/trace/trace_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dtr/models/model_registry.h"
#include "dtr/sim/program_source.h"
#include "dtr/trace/program.h"
#include "dtr/trace/trace_reader.h"

namespace dtr::trace {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

Program read_text(const std::string& text, const std::string& source = "w") {
  std::istringstream in(text);
  return read_trace(in, source);
}

std::string step_string(const Step& s) {
  const char* kind = "?";
  switch (s.kind) {
    case StepKind::kCompute:
      kind = "compute";
      break;
    case StepKind::kRetain:
      kind = "retain";
      break;
    case StepKind::kRelease:
      kind = "release";
      break;
    case StepKind::kPin:
      kind = "pin";
      break;
    case StepKind::kUnpin:
      kind = "unpin";
      break;
  }
  return std::string(kind) + " " + std::to_string(s.index);
}

std::vector<std::string> steps_of(const Program& p, bool with_pins = true) {
  std::vector<std::string> out;
  for (const Step& s : p.steps) {
    if (with_pins || s.kind != StepKind::kPin) out.push_back(step_string(s));
  }
  return out;
}

std::vector<ValueId> sorted_pins(const Program& p) {
  std::vector<ValueId> out;
  for (const Step& s : p.steps) {
    if (s.kind == StepKind::kPin) out.push_back(s.index);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Every field of every op, compared one by one so a mismatch says where.
void expect_same_ops(const Program& a, const Program& b) {
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    SCOPED_TRACE("op " + std::to_string(i) + " (" + a.ops[i].name + ")");
    EXPECT_EQ(a.ops[i].name, b.ops[i].name);
    EXPECT_EQ(a.ops[i].cost_ns, b.ops[i].cost_ns);
    EXPECT_EQ(a.ops[i].inputs, b.ops[i].inputs);
    EXPECT_EQ(a.ops[i].first_output, b.ops[i].first_output);
    EXPECT_EQ(a.ops[i].constant, b.ops[i].constant);
    EXPECT_EQ(a.ops[i].backward, b.ops[i].backward);
    ASSERT_EQ(a.ops[i].outputs.size(), b.ops[i].outputs.size());
    for (std::size_t k = 0; k < a.ops[i].outputs.size(); ++k) {
      EXPECT_EQ(a.ops[i].outputs[k].bytes, b.ops[i].outputs[k].bytes) << k;
      EXPECT_EQ(a.ops[i].outputs[k].alias_of, b.ops[i].outputs[k].alias_of)
          << k;
    }
  }
  EXPECT_EQ(a.value_count, b.value_count);
  EXPECT_EQ(a.total_cost_ns, b.total_cost_ns);
  EXPECT_EQ(a.constant_count, b.constant_count);
}

// ---------------------------------------------------------------------------
// Literal lines

TEST(TraceWriterTest, LinesMatchThePapersLogsExactly) {
  // Lines of simrd/logs/inceptionv4-...log, the paper's authors' trace.
  std::ostringstream out;
  TraceWriter w(out);
  w.annotate("START");
  w.constant("x35415", 3456);
  w.copy("x35416", "x35415");
  w.release("x35415");
  w.call("cudnn_convolution", {"x36760", "x35416"}, {{"x36764", 1000, -1}},
         621158);
  std::vector<std::string> args = {"x36771"};
  std::vector<int> mutated = {0};
  w.mutate("relu_", args, mutated, 1301658);
  w.copy_from("x52688", "x63199");
  std::vector<std::string> expected = {
      R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"})",
      R"({"INSTRUCTION":"CONSTANT","NAME":"x35415"})",
      R"({"INSTRUCTION":"MEMORY","MEMORY":"3456","NAME":"x35415"})",
      R"({"DST":"x35416","INSTRUCTION":"COPY","SRC":"x35415"})",
      R"({"INSTRUCTION":"RELEASE","NAME":"x35415"})",
      R"({"ARGS":["x36760","x35416"],"INSTRUCTION":"CALL","NAME":"cudnn_convolution","RESULT":["x36764"],"TIME":"621158"})",
      R"({"INSTRUCTION":"MEMORY","MEMORY":"1000","NAME":"x36764"})",
      R"({"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x36764"})",
      R"({"ARGS":["x36771"],"INSTRUCTION":"MUTATE","MUTATE":[0],"NAME":"relu_","TIME":"1301658"})",
      R"({"DST":"x52688","INSTRUCTION":"COPY_FROM","SRC":"x63199"})",
  };
  const std::string text = out.str();
  EXPECT_EQ(split_lines(text), expected);
  // One instruction per line, each ended by '\n'.
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
            static_cast<std::ptrdiff_t>(expected.size()));
  EXPECT_EQ(w.lines(), expected.size());
}

// What the LibTorch layer holds (docs/trace-format.md): PIN and UNPIN.
TEST(TraceWriterTest, PinAndUnpinLinesAreReadBackAsSteps) {
  std::ostringstream out;
  TraceWriter w(out);
  w.constant("x1", 8);
  w.call("f", {"x1"}, {{"x2", 8, -1}}, 1);
  w.pin("x2");
  w.unpin("x2");
  w.release("x2");
  const std::vector<std::string> lines = split_lines(out.str());
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[5], R"({"INSTRUCTION":"PIN","NAME":"x2"})");
  EXPECT_EQ(lines[6], R"({"INSTRUCTION":"UNPIN","NAME":"x2"})");
  std::istringstream in(out.str());
  const Program p = read_trace(in, "pins.log");
  EXPECT_EQ(steps_of(p),
            (std::vector<std::string>{"compute 0", "compute 1", "pin 1",
                                      "unpin 1", "release 1", "pin 0"}));
}

TEST(TraceWriterTest, CallLineMatchesTheBriefsExample) {
  std::ostringstream out;
  TraceWriter w(out);
  w.call("relu", {"x1"}, {{"x2", 4096, -1}}, 5);
  EXPECT_EQ(
      split_lines(out.str()),
      (std::vector<std::string>{
          R"({"ARGS":["x1"],"INSTRUCTION":"CALL","NAME":"relu","RESULT":["x2"],"TIME":"5"})",
          R"({"INSTRUCTION":"MEMORY","MEMORY":"4096","NAME":"x2"})",
          R"({"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x2"})"}));
}

// Note [Workspace]: written only where there is one, so that traces of ops
// without scratch stay the paper's lines.
TEST(TraceWriterTest, AWorkspaceIsWrittenAndReadBack) {
  std::ostringstream out;
  TraceWriter w(out);
  w.constant("x1", 8);
  w.call("conv", {"x1"}, {{"x2", 8, -1}}, 5, 4096);
  w.call("relu", {"x2"}, {{"x3", 8, -1}}, 5, 0);
  const std::vector<std::string> lines = split_lines(out.str());
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(
      lines[2],
      R"({"ARGS":["x1"],"INSTRUCTION":"CALL","NAME":"conv","RESULT":["x2"],"TIME":"5","WORKSPACE":"4096"})");
  EXPECT_EQ(lines[5].find("WORKSPACE"), std::string::npos);
  const Program p = read_text(out.str());
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[1].workspace_bytes, 4096);
  EXPECT_EQ(p.ops[2].workspace_bytes, 0);
}

TEST(TraceWriterTest, MultiOutputCallWritesMemoryAliasPairsInResultOrder) {
  // The LSTM log's 3-way split (docs/trace-format.md): every output aliases
  // argument 0 and logs the full input storage size.
  std::ostringstream out;
  TraceWriter w(out);
  w.call("split", {"x81462"},
         {{"x81464", 10444800, 0},
          {"x81465", 10444800, 0},
          {"x81466", 10444800, 0}},
         8787);
  std::vector<std::string> lines = split_lines(out.str());
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(
      lines[0],
      R"({"ARGS":["x81462"],"INSTRUCTION":"CALL","NAME":"split","RESULT":["x81464","x81465","x81466"],"TIME":"8787"})");
  EXPECT_EQ(lines[1],
            R"({"INSTRUCTION":"MEMORY","MEMORY":"10444800","NAME":"x81464"})");
  EXPECT_EQ(lines[2], R"({"ALIAS":"0","INSTRUCTION":"ALIAS","NAME":"x81464"})");
  EXPECT_EQ(lines[3],
            R"({"INSTRUCTION":"MEMORY","MEMORY":"10444800","NAME":"x81465"})");
  EXPECT_EQ(lines[4], R"({"ALIAS":"0","INSTRUCTION":"ALIAS","NAME":"x81465"})");
  EXPECT_EQ(lines[5],
            R"({"INSTRUCTION":"MEMORY","MEMORY":"10444800","NAME":"x81466"})");
  EXPECT_EQ(lines[6], R"({"ALIAS":"0","INSTRUCTION":"ALIAS","NAME":"x81466"})");
}

TEST(TraceWriterTest, EdgeValuesAreWrittenAsTheLoggerWould) {
  std::ostringstream out;
  TraceWriter w(out);
  w.call("randn", std::initializer_list<std::string>{}, {{"x1", 0, -1}}, 0);
  w.constant("x2", 181870592000);  // beyond 32 bits
  std::vector<std::string> args = {"x1", "x2", "x3"};
  std::vector<int> mutated = {0, 2};
  w.mutate("addcmul_", args, mutated, 12);
  w.annotate("BACKWARD");
  std::vector<std::string> lines = split_lines(out.str());
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(
      lines[0],
      R"({"ARGS":[],"INSTRUCTION":"CALL","NAME":"randn","RESULT":["x1"],"TIME":"0"})");
  EXPECT_EQ(lines[1], R"({"INSTRUCTION":"MEMORY","MEMORY":"0","NAME":"x1"})");
  EXPECT_EQ(lines[4],
            R"({"INSTRUCTION":"MEMORY","MEMORY":"181870592000","NAME":"x2"})");
  EXPECT_EQ(
      lines[5],
      R"({"ARGS":["x1","x2","x3"],"INSTRUCTION":"MUTATE","MUTATE":[0,2],"NAME":"addcmul_","TIME":"12"})");
  EXPECT_EQ(lines[6], R"({"ANNOTATION":"BACKWARD","INSTRUCTION":"ANNOTATE"})");
}

TEST(TraceWriterTest, NamesWithSpecialCharactersAreEscaped) {
  std::ostringstream out;
  TraceWriter w(out);
  w.call("weird \"op\"\\", {"x1"}, {{"x2", 4, -1}}, 1);
  std::vector<std::string> lines = split_lines(out.str());
  ASSERT_EQ(lines.size(), 3u);  // no raw newline or quote breaks a line
  nlohmann::json j = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(j["NAME"], "weird \"op\"\\");
}

TEST(TraceWriterTest, EveryLineHasSortedKeysAndStringNumbers) {
  std::ostringstream out;
  TraceWriter w(out);
  models::build_model("resnet", {}, w);
  std::vector<std::string> lines = split_lines(out.str());
  ASSERT_GT(lines.size(), 100u);
  EXPECT_EQ(lines.size(), w.lines());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(lines[i]);
    ASSERT_TRUE(j.is_object()) << lines[i];
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()))
        << "line " << i + 1 << ": " << lines[i];
    for (const char* k : {"TIME", "MEMORY", "ALIAS"}) {
      if (j.contains(k)) {
        ASSERT_TRUE(j[k].is_string()) << "line " << i + 1 << ": " << lines[i];
      }
    }
    if (j.contains("MUTATE")) {
      ASSERT_TRUE(j["MUTATE"].is_array()) << lines[i];
      for (const auto& m : j["MUTATE"]) ASSERT_TRUE(m.is_number_integer());
    }
    // Compact: the dump has no spaces outside strings, like the logger's.
    ASSERT_EQ(lines[i], j.dump()) << "line " << i + 1;
  }
}

// ---------------------------------------------------------------------------
// lines()

TEST(TraceWriterTest, LinesCountsEveryInstructionLine) {
  std::ostringstream out;
  TraceWriter w(out);
  EXPECT_EQ(w.lines(), 0u);
  w.annotate("START");
  EXPECT_EQ(w.lines(), 1u);
  w.constant("x1", 8);  // CONSTANT + MEMORY
  EXPECT_EQ(w.lines(), 3u);
  w.call("f", {"x1"}, {{"x2", 8, -1}}, 1);  // CALL + 1 pair
  EXPECT_EQ(w.lines(), 6u);
  w.call("g", {"x2"}, {{"x3", 8, 0}, {"x4", 8, -1}, {"x5", 0, -1}}, 1);
  EXPECT_EQ(w.lines(), 13u);  // CALL + 3 pairs
  std::vector<std::string> args = {"x3"};
  std::vector<int> mutated = {0};
  w.mutate("relu_", args, mutated, 1);  // no pairs follow a MUTATE
  EXPECT_EQ(w.lines(), 14u);
  w.copy("x6", "x4");
  w.copy_from("x6", "x5");
  w.release("x6");
  EXPECT_EQ(w.lines(), 17u);
  EXPECT_EQ(split_lines(out.str()).size(), w.lines());
}

// ---------------------------------------------------------------------------
// Round trips

TEST(TraceWriterTest, RoundTripGivesTheProgramThatWasWritten) {
  std::ostringstream out;
  TraceWriter w(out);
  w.annotate("START");
  w.constant("x1", 400);                                 // op 0, value 0
  w.constant("x2", 16);                                  // op 1, value 1
  w.call("conv", {"x1", "x2"}, {{"x3", 800, -1}}, 100);  // op 2, value 2
  w.call("split", {"x3"},                                // op 3, values 3-5
         {{"x4", 800, 0}, {"x5", 800, 0}, {"x6", 12, -1}}, 7);
  w.copy("x7", "x6");
  w.release("x3");
  std::vector<std::string> margs = {"x4", "x2"};
  std::vector<int> mutated = {0};
  w.mutate("relu_", margs, mutated, 30);  // op 4, value 6
  w.annotate("BACKWARD");
  w.call("mul", {"x4", "x7"}, {{"x8", 64, -1}}, 9);  // op 5, value 7
  w.copy_from("x5", "x8");
  w.release("x6");
  w.release("x8");
  w.annotate("STEP");
  Program p = read_text(out.str(), "round.log");
  // The mark comes after everything but the output condition's pins.
  ASSERT_EQ(p.step_starts.size(), 1u);
  EXPECT_EQ(p.steps.at(p.step_starts[0]).kind, StepKind::kPin);
  EXPECT_NE(p.steps.at(p.step_starts[0] - 1).kind, StepKind::kPin);

  EXPECT_EQ(p.source, "round.log");
  ASSERT_EQ(p.ops.size(), 6u);
  EXPECT_EQ(p.value_count, 8u);
  EXPECT_EQ(p.constant_count, 2u);
  EXPECT_EQ(p.total_cost_ns, 100 + 7 + 30 + 9);

  EXPECT_TRUE(p.ops[0].constant);
  EXPECT_EQ(p.ops[0].outputs[0].bytes, 400);
  EXPECT_TRUE(p.ops[1].constant);
  EXPECT_EQ(p.ops[1].outputs[0].bytes, 16);

  EXPECT_EQ(p.ops[2].name, "conv");
  EXPECT_EQ(p.ops[2].cost_ns, 100);
  EXPECT_EQ(p.ops[2].inputs, (std::vector<ValueId>{0, 1}));
  EXPECT_EQ(p.ops[2].outputs[0].bytes, 800);

  EXPECT_EQ(p.ops[3].name, "split");
  EXPECT_EQ(p.ops[3].inputs, (std::vector<ValueId>{2}));
  EXPECT_EQ(p.ops[3].first_output, 3u);
  ASSERT_EQ(p.ops[3].outputs.size(), 3u);
  EXPECT_EQ(p.ops[3].outputs[0].bytes, 0);  // aliases own nothing
  EXPECT_EQ(p.ops[3].outputs[0].alias_of, 0);
  EXPECT_EQ(p.ops[3].outputs[1].bytes, 0);
  EXPECT_EQ(p.ops[3].outputs[1].alias_of, 0);
  EXPECT_EQ(p.ops[3].outputs[2].bytes, 12);
  EXPECT_EQ(p.ops[3].outputs[2].alias_of, -1);

  EXPECT_EQ(p.ops[4].name, "relu_");
  EXPECT_EQ(p.ops[4].inputs, (std::vector<ValueId>{3, 1}));
  EXPECT_EQ(p.ops[4].outputs[0].bytes, 800);  // x4 views x3's storage
  EXPECT_FALSE(p.ops[4].backward);

  EXPECT_EQ(p.ops[5].name, "mul");
  EXPECT_EQ(p.ops[5].inputs, (std::vector<ValueId>{6, 5}));
  EXPECT_TRUE(p.ops[5].backward);

  EXPECT_EQ(steps_of(p, /*with_pins=*/false),
            (std::vector<std::string>{
                "compute 0", "compute 1", "compute 2", "compute 3",
                "retain 5",                            // COPY x7 <- x6
                "release 2",                           // RELEASE x3
                "compute 4", "release 3",              // MUTATE x4
                "compute 5", "release 4", "retain 7",  // COPY_FROM x5 <- x8
                "release 5",                           // RELEASE x6
                "release 7"}));                        // RELEASE x8
  // Still referenced: x1 (0), x2 (1), x4 (6), x5 (7), x7 (5).
  EXPECT_EQ(sorted_pins(p), (std::vector<ValueId>{0, 1, 5, 6, 7}));
}

// Writes a Program back out as a trace (value v is named "x<v>"), so that a
// Program -> trace -> Program round trip can be checked on real models.
void write_program(const Program& p, TraceWriter& w) {
  std::vector<std::int64_t> storage_bytes(p.value_count, 0);
  std::vector<ValueId> op_of_value(p.value_count, 0);
  bool backward = false;
  int copies = 0;
  auto name = [](ValueId v) { return "x" + std::to_string(v); };
  // Each handle is a name; a value's live names (one per reference).
  std::vector<std::vector<std::string>> live(p.value_count);
  for (const Step& s : p.steps) {
    switch (s.kind) {
      case StepKind::kCompute: {
        const ProgramOp& op = p.ops[s.index];
        if (op.backward && !backward) {
          w.annotate("BACKWARD");
          backward = true;
        }
        if (op.constant) {
          storage_bytes[op.first_output] = op.outputs[0].bytes;
          w.constant(name(op.first_output), op.outputs[0].bytes);
          live[op.first_output].push_back(name(op.first_output));
          break;
        }
        std::vector<std::string> args;
        for (ValueId v : op.inputs) args.push_back(name(v));
        std::vector<TraceWriter::Result> results;
        for (std::size_t k = 0; k < op.outputs.size(); ++k) {
          ValueId v = op.first_output + static_cast<ValueId>(k);
          const OutputSpec& o = op.outputs[k];
          storage_bytes[v] =
              o.alias_of >= 0 ? storage_bytes[op.inputs[o.alias_of]] : o.bytes;
          results.push_back({name(v), storage_bytes[v], o.alias_of});
          live[v].push_back(name(v));
        }
        w.call(op.name, args, results, op.cost_ns);
        break;
      }
      case StepKind::kRetain: {
        std::string copy = name(s.index) + "_copy" + std::to_string(copies++);
        w.copy(copy, live[s.index].back());
        live[s.index].push_back(copy);
        break;
      }
      case StepKind::kRelease:
        w.release(live[s.index].back());
        live[s.index].pop_back();
        break;
      case StepKind::kPin:
        break;  // the reader derives the output condition itself
      case StepKind::kUnpin:
        w.unpin(live[s.index].back());
        break;
    }
  }
}

TEST(TraceWriterTest, ModelProgramsSurviveARoundTrip) {
  for (const char* model : {"chain", "resnet", "lstm", "treelstm"}) {
    SCOPED_TRACE(model);
    Program first = sim::load_program(std::string("model:") + model).program;
    ASSERT_GT(first.ops.size(), 10u);
    std::ostringstream out;
    TraceWriter w(out);
    write_program(first, w);
    EXPECT_EQ(split_lines(out.str()).size(), w.lines());
    Program second = read_text(out.str(), model);
    expect_same_ops(first, second);
    EXPECT_EQ(steps_of(first, false), steps_of(second, false));
    EXPECT_EQ(sorted_pins(first), sorted_pins(second));
  }
}

TEST(TraceWriterTest, WritingTheSameModelTwiceIsByteIdentical) {
  std::ostringstream a, b;
  TraceWriter wa(a), wb(b);
  models::build_model("transformer", {}, wa);
  models::build_model("transformer", {}, wb);
  EXPECT_EQ(a.str(), b.str());
  EXPECT_EQ(wa.lines(), wb.lines());
}

}  // namespace
}  // namespace dtr::trace
