// Tests of the trace reader (dtr/trace/trace_reader.h): the paper's log format
// (docs/trace-format.md) turned into a Program, with the reference parser's
// conventions, and every malformed input reported as a TraceError that names
// the source, the 1-based line and the problem ("[name:LINE] ...").
#include "dtr/trace/trace_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/program.h"

namespace dtr::trace {
namespace {

// ---------------------------------------------------------------------------
// Building traces as text, line by line, in the paper's exact format.

struct Res {
  std::string name;
  std::string bytes;
  std::string alias = "-1";
};

std::string quoted_list(std::initializer_list<std::string> xs) {
  std::string out = "[";
  for (const auto& x : xs) {
    out += (out.size() > 1 ? "," : "") + std::string("\"") + x + "\"";
  }
  return out + "]";
}

std::string annotate(const std::string& a) {
  return "{\"ANNOTATION\":\"" + a + "\",\"INSTRUCTION\":\"ANNOTATE\"}\n";
}
std::string memory(const std::string& name, const std::string& bytes) {
  return "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"" + bytes +
         "\",\"NAME\":\"" + name + "\"}\n";
}
std::string alias(const std::string& name, const std::string& index) {
  return "{\"ALIAS\":\"" + index + "\",\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"" +
         name + "\"}\n";
}
// Two lines: CONSTANT and its MEMORY.
std::string constant(const std::string& name, const std::string& bytes) {
  return "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"" + name + "\"}\n" +
         memory(name, bytes);
}
// The CALL line alone.
std::string call_line(const std::string& op,
                      std::initializer_list<std::string> args,
                      std::initializer_list<std::string> results,
                      const std::string& time) {
  return "{\"ARGS\":" + quoted_list(args) +
         ",\"INSTRUCTION\":\"CALL\",\"NAME\":\"" + op +
         "\",\"RESULT\":" + quoted_list(results) + ",\"TIME\":\"" + time +
         "\"}\n";
}
// A CALL and its MEMORY/ALIAS pairs: 1 + 2 * results lines.
std::string call(const std::string& op, std::initializer_list<std::string> args,
                 std::initializer_list<Res> results, const std::string& time) {
  std::string out = "{\"ARGS\":" + quoted_list(args) +
                    ",\"INSTRUCTION\":\"CALL\",\"NAME\":\"" + op +
                    "\",\"RESULT\":[";
  bool first = true;
  for (const auto& r : results) {
    out += (first ? "\"" : ",\"") + r.name + "\"";
    first = false;
  }
  out += "],\"TIME\":\"" + time + "\"}\n";
  for (const auto& r : results)
    out += memory(r.name, r.bytes) + alias(r.name, r.alias);
  return out;
}
std::string mutate(const std::string& op,
                   std::initializer_list<std::string> args,
                   const std::string& indices, const std::string& time) {
  return "{\"ARGS\":" + quoted_list(args) +
         ",\"INSTRUCTION\":\"MUTATE\",\"MUTATE\":" + indices + ",\"NAME\":\"" +
         op + "\",\"TIME\":\"" + time + "\"}\n";
}
std::string copy(const std::string& dst, const std::string& src) {
  return "{\"DST\":\"" + dst + "\",\"INSTRUCTION\":\"COPY\",\"SRC\":\"" + src +
         "\"}\n";
}
std::string copy_from(const std::string& dst, const std::string& src) {
  return "{\"DST\":\"" + dst + "\",\"INSTRUCTION\":\"COPY_FROM\",\"SRC\":\"" +
         src + "\"}\n";
}
std::string release(const std::string& name) {
  return "{\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"" + name + "\"}\n";
}

// ---------------------------------------------------------------------------
// Reading and inspecting.

Program read(const std::string& text, TraceReadOptions options = {},
             const std::string& source = "test.log") {
  std::istringstream in(text);
  return read_trace(in, source, options);
}

// Steps in a readable form, so that a mismatch prints the whole schedule.
std::vector<std::string> steps_of(const Program& p) {
  std::vector<std::string> out;
  for (const Step& s : p.steps) {
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
    out.push_back(std::string(kind) + " " + std::to_string(s.index));
  }
  return out;
}

std::vector<ValueId> pinned_values(const Program& p) {
  std::vector<ValueId> out;
  for (const Step& s : p.steps) {
    if (s.kind == StepKind::kPin) out.push_back(s.index);
  }
  return out;
}

// Pinned values without repeats, in the order of their first Pin step (a
// value with several live names may be pinned once per name; the runtime
// ignores the repeats).
std::vector<ValueId> unique_pins(const Program& p) {
  std::vector<ValueId> out;
  for (ValueId v : pinned_values(p)) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// The steps before the first Pin step.
std::vector<std::string> steps_before_pins(const Program& p) {
  std::vector<std::string> out;
  for (const auto& s : steps_of(p)) {
    if (s.rfind("pin ", 0) == 0) break;
    out.push_back(s);
  }
  return out;
}

// Runs the reader on malformed text and returns the TraceError message. Any
// other outcome (no exception, or an exception of another type) is a failure.
std::string read_error(const std::string& text, TraceReadOptions options = {}) {
  std::istringstream in(text);
  try {
    read_trace(in, "bad.log", options);
  } catch (const TraceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected dtr::trace::TraceError, got another exception: "
                  << e.what();
    return "<other exception>";
  }
  ADD_FAILURE()
      << "expected dtr::trace::TraceError, but the trace was accepted";
  return "<accepted>";
}

// The message starts with "[bad.log:LINE] " and contains every needle.
::testing::AssertionResult is_error_at(
    const std::string& message, int line,
    std::initializer_list<std::string> needles) {
  std::string prefix = "[bad.log:" + std::to_string(line) + "] ";
  if (message.rfind(prefix, 0) != 0) {
    return ::testing::AssertionFailure()
           << "message '" << message << "' does not start with '" << prefix
           << "'";
  }
  for (const auto& n : needles) {
    if (message.find(n) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message '" << message << "' does not mention '" << n << "'";
    }
  }
  return ::testing::AssertionSuccess();
}

#define EXPECT_TRACE_ERROR(text, line, ...) \
  EXPECT_TRUE(is_error_at(read_error(text), line, {__VA_ARGS__}))

// ===========================================================================
// Malformed input

TEST(TraceReaderTest, InvalidJsonNamesLineAndQuotesIt) {
  std::string text = constant("x1", "4") + "{\"INSTRUCTION\":\"CALL\",\n";
  EXPECT_TRACE_ERROR(text, 3, "not valid JSON", "{\"INSTRUCTION\":\"CALL\",");
  EXPECT_TRACE_ERROR("not json at all\n", 1, "not valid JSON");
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + "{\"INSTRUCTION\":\"RELEASE\"} trailing\n", 3,
      "not valid JSON");
}

TEST(TraceReaderTest, InvalidJsonExcerptIsShortenedForLongLines) {
  std::string long_line =
      "{\"INSTRUCTION\":\"CALL\"," + std::string(200, 'x') + "\n";
  std::string message = read_error(long_line);
  EXPECT_TRUE(is_error_at(message, 1, {"not valid JSON", "..."}));
  EXPECT_LT(message.size(), 150u) << message;
}

TEST(TraceReaderTest, NonObjectLinesAreRejected) {
  EXPECT_TRACE_ERROR("[1,2]\n", 1, "JSON object");
  EXPECT_TRACE_ERROR(constant("x1", "4") + "\"CALL\"\n", 3, "JSON object");
  EXPECT_TRACE_ERROR(constant("x1", "4") + "42\n", 3, "JSON object");
  EXPECT_TRACE_ERROR(constant("x1", "4") + "null\n", 3, "JSON object");
}

TEST(TraceReaderTest, MissingInstruction) {
  EXPECT_TRACE_ERROR(constant("x1", "4") + "{\"NAME\":\"x1\"}\n", 3,
                     "missing field INSTRUCTION");
}

TEST(TraceReaderTest, InstructionMustBeAString) {
  EXPECT_TRACE_ERROR("{\"INSTRUCTION\":7,\"NAME\":\"x1\"}\n", 1,
                     "INSTRUCTION must be a string");
}

TEST(TraceReaderTest, UnknownInstruction) {
  EXPECT_TRACE_ERROR(constant("x1", "4") + "{\"INSTRUCTION\":\"FOO\"}\n", 3,
                     "unknown instruction 'FOO'");
  // Instruction names are case sensitive, as in the logger.
  EXPECT_TRACE_ERROR("{\"INSTRUCTION\":\"call\"}\n", 1,
                     "unknown instruction 'call'");
}

TEST(TraceReaderTest, CallMissingFields) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR(k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\","
                         "\"RESULT\":[\"x2\"],\"TIME\":\"5\"}\n",
                     3, "missing field NAME");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"CALL\",\"NAME\":\"relu\","
                         "\"RESULT\":[\"x2\"],\"TIME\":\"5\"}\n",
                     3, "missing field ARGS");
  EXPECT_TRACE_ERROR(k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\","
                         "\"NAME\":\"relu\",\"TIME\":\"5\"}\n",
                     3, "missing field RESULT");
  EXPECT_TRACE_ERROR(k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\","
                         "\"NAME\":\"relu\",\"RESULT\":[\"x2\"]}\n",
                     3, "missing field TIME");
}

TEST(TraceReaderTest, CallWithEmptyResultIsRejected) {
  EXPECT_TRACE_ERROR(constant("x1", "4") + call_line("relu", {"x1"}, {}, "5"),
                     3, "'relu'", "no RESULT");
}

TEST(TraceReaderTest, OtherInstructionsMissingFields) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR("{\"INSTRUCTION\":\"CONSTANT\"}\n", 1,
                     "missing field NAME");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"COPY\",\"SRC\":\"x1\"}\n", 3,
                     "missing field DST");
  EXPECT_TRACE_ERROR(k + "{\"DST\":\"x2\",\"INSTRUCTION\":\"COPY\"}\n", 3,
                     "missing field SRC");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"COPY_FROM\",\"SRC\":\"x1\"}\n", 3,
                     "missing field DST");
  EXPECT_TRACE_ERROR(k + "{\"DST\":\"x1\",\"INSTRUCTION\":\"COPY_FROM\"}\n", 3,
                     "missing field SRC");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"RELEASE\"}\n", 3,
                     "missing field NAME");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"ANNOTATE\"}\n", 3,
                     "missing field ANNOTATION");
  EXPECT_TRACE_ERROR(k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"MUTATE\","
                         "\"MUTATE\":[0],\"TIME\":\"1\"}\n",
                     3, "missing field NAME");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"MUTATE\",\"MUTATE\":[0],"
                         "\"NAME\":\"add_\",\"TIME\":\"1\"}\n",
                     3, "missing field ARGS");
  EXPECT_TRACE_ERROR(k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"MUTATE\","
                         "\"MUTATE\":[0],\"NAME\":\"add_\"}\n",
                     3, "missing field TIME");
  EXPECT_TRACE_ERROR(k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"MUTATE\","
                         "\"NAME\":\"add_\",\"TIME\":\"1\"}\n",
                     3, "MUTATE");
}

TEST(TraceReaderTest, MemoryAndAliasLinesMissingTheirValue) {
  EXPECT_TRACE_ERROR(
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"NAME\":\"x1\"}\n",
      2, "missing field MEMORY");
  EXPECT_TRACE_ERROR(
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"4\"}\n",
      2, "missing field NAME");
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + call_line("relu", {"x1"}, {"x2"}, "5") +
          memory("x2", "4") + "{\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"x2\"}\n",
      5, "missing field ALIAS");
}

TEST(TraceReaderTest, WrongFieldTypes) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR("{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":5}\n", 1,
                     "field NAME must be a string");
  EXPECT_TRACE_ERROR(
      k + "{\"ARGS\":\"x1\",\"INSTRUCTION\":\"CALL\","
          "\"NAME\":\"relu\",\"RESULT\":[\"x2\"],\"TIME\":\"5\"}\n",
      3, "field ARGS must be a list");
  EXPECT_TRACE_ERROR(
      k + "{\"ARGS\":[1],\"INSTRUCTION\":\"CALL\","
          "\"NAME\":\"relu\",\"RESULT\":[\"x2\"],\"TIME\":\"5\"}\n",
      3, "field ARGS must hold only strings");
  EXPECT_TRACE_ERROR(
      k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\","
          "\"NAME\":\"relu\",\"RESULT\":{\"a\":1},\"TIME\":\"5\"}\n",
      3, "field RESULT must be a list");
  EXPECT_TRACE_ERROR(
      k + "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\","
          "\"NAME\":[\"relu\"],\"RESULT\":[\"x2\"],\"TIME\":\"5\"}\n",
      3, "field NAME must be a string");
  EXPECT_TRACE_ERROR(
      k + "{\"DST\":2,\"INSTRUCTION\":\"COPY\",\"SRC\":\"x1\"}\n", 3,
      "field DST must be a string");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"RELEASE\",\"NAME\":null}\n", 3,
                     "field NAME must be a string");
  EXPECT_TRACE_ERROR(k + "{\"ANNOTATION\":1,\"INSTRUCTION\":\"ANNOTATE\"}\n", 3,
                     "field ANNOTATION must be a string");
}

TEST(TraceReaderTest, NonIntegerTimeIsRejected) {
  std::string k = constant("x1", "4");
  for (std::string bad : {"\"abc\"", "\"1.5\"", "1.5", "\"\"", "true", "\" 5\"",
                          "\"5ns\"", "[5]", "\"0x10\""}) {
    SCOPED_TRACE(bad);
    std::string line =
        "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\",\"NAME\":"
        "\"relu\",\"RESULT\":[\"x2\"],\"TIME\":" +
        bad + "}\n";
    EXPECT_TRACE_ERROR(k + line + memory("x2", "4") + alias("x2", "-1"), 3,
                       "TIME must be an integer");
  }
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1"}, "[0]", "fast"), 3,
                     "TIME must be an integer", "fast");
}

TEST(TraceReaderTest, NegativeTimeIsRejected) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR(k + call("relu", {"x1"}, {{"x2", "4"}}, "-5"), 3,
                     "negative TIME -5");
  std::string json_int =
      "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\",\"NAME\":"
      "\"relu\",\"RESULT\":[\"x2\"],\"TIME\":-7}\n";
  EXPECT_TRACE_ERROR(k + json_int + memory("x2", "4") + alias("x2", "-1"), 3,
                     "negative TIME -7");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1"}, "[0]", "-1"), 3,
                     "negative TIME");
}

TEST(TraceReaderTest, BadWorkspaceIsRejected) {
  std::string k = constant("x1", "4");
  auto with_workspace = [&](const std::string& value) {
    return k +
           "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\",\"NAME\":"
           "\"conv\",\"RESULT\":[\"x2\"],\"TIME\":\"5\",\"WORKSPACE\":" +
           value + "}\n" + memory("x2", "4") + alias("x2", "-1");
  };
  EXPECT_TRACE_ERROR(with_workspace("\"-8\""), 3,
                     "WORKSPACE -8 is negative or exceeds 2^50 bytes");
  EXPECT_TRACE_ERROR(with_workspace("\"lots\""), 3,
                     "WORKSPACE must be an integer");
  EXPECT_TRACE_ERROR(with_workspace("\"2251799813685249\""), 3,
                     "exceeds 2^50 bytes");
}

TEST(TraceReaderTest, NonIntegerOrNegativeMemoryIsRejected) {
  EXPECT_TRACE_ERROR(constant("x1", "12abc"), 2, "MEMORY must be an integer");
  EXPECT_TRACE_ERROR(constant("x1", "4.5"), 2, "MEMORY must be an integer");
  EXPECT_TRACE_ERROR(constant("x1", "-1"), 2, "negative MEMORY -1");
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + call("relu", {"x1"}, {{"x2", "-8"}}, "5"), 4,
      "negative MEMORY -8");
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + call("relu", {"x1"}, {{"x2", "big"}}, "5"), 4,
      "MEMORY must be an integer");
  EXPECT_TRACE_ERROR(
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":-3,\"NAME\":\"x1\"}\n",
      2, "negative MEMORY -3");
}

TEST(TraceReaderTest, NonIntegerAliasIsRejected) {
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + call("view", {"x1"}, {{"x2", "4", "zero"}}, "5"), 5,
      "ALIAS must be an integer");
}

TEST(TraceReaderTest, CallMustBeFollowedByMemoryThenAlias) {
  std::string k = constant("x1", "4");
  // Another instruction where MEMORY belongs.
  EXPECT_TRACE_ERROR(k + call_line("relu", {"x1"}, {"x2"}, "5") + release("x1"),
                     4, "expected MEMORY for 'x2'");
  // MEMORY twice: the second is where ALIAS belongs.
  EXPECT_TRACE_ERROR(k + call_line("relu", {"x1"}, {"x2"}, "5") +
                         memory("x2", "4") + memory("x2", "4"),
                     5, "expected ALIAS for 'x2'");
  // ALIAS before MEMORY.
  EXPECT_TRACE_ERROR(k + call_line("relu", {"x1"}, {"x2"}, "5") +
                         alias("x2", "-1") + memory("x2", "4"),
                     4, "expected MEMORY for 'x2'");
  // Only the first of two results has its pair.
  EXPECT_TRACE_ERROR(k + call_line("split", {"x1"}, {"x2", "x3"}, "5") +
                         memory("x2", "4") + alias("x2", "0") +
                         call("relu", {"x1"}, {{"x4", "4"}}, "5"),
                     6, "expected MEMORY for 'x3'");
  // A CONSTANT must be followed by its MEMORY too.
  EXPECT_TRACE_ERROR(
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n" + release("x1"), 2,
      "expected MEMORY for 'x1'");
}

TEST(TraceReaderTest, MemoryAndAliasNamesMustFollowResultOrder) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR(k + call_line("split", {"x1"}, {"x2", "x3"}, "5") +
                         memory("x3", "4") + alias("x3", "0") +
                         memory("x2", "4") + alias("x2", "0"),
                     4, "MEMORY names 'x3', expected 'x2'");
  EXPECT_TRACE_ERROR(k + call_line("split", {"x1"}, {"x2", "x3"}, "5") +
                         memory("x2", "4") + alias("x3", "0"),
                     5, "ALIAS names 'x3', expected 'x2'");
  EXPECT_TRACE_ERROR(
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n" + memory("x7", "4"), 2,
      "MEMORY names 'x7', expected 'x1'");
}

TEST(TraceReaderTest, AliasIndexOutOfRange) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR(k + call("view", {"x1"}, {{"x2", "4", "1"}}, "5"), 5,
                     "ALIAS 1 of 'x2' is not an argument index");
  EXPECT_TRACE_ERROR(k + call("view", {"x1"}, {{"x2", "4", "-2"}}, "5"), 5,
                     "ALIAS -2 of 'x2'");
  // A nullary op has nothing to alias.
  EXPECT_TRACE_ERROR(call("randn", {}, {{"x2", "4", "0"}}, "5"), 3,
                     "ALIAS 0 of 'x2'");
}

TEST(TraceReaderTest, UndefinedArgument) {
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + call("add", {"x1", "x9"}, {{"x2", "4"}}, "5"), 3,
      "argument 'x9' is not defined");
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + mutate("add_", {"x1", "x9"}, "[0]", "5"), 3,
      "argument 'x9' is not defined");
}

TEST(TraceReaderTest, ResultNameAlreadyDefined) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR(k + call("relu", {"x1"}, {{"x1", "4"}}, "5"), 3,
                     "name 'x1' is already defined");
  EXPECT_TRACE_ERROR(k + call("relu", {"x1"}, {{"x2", "4"}}, "5") +
                         call("relu", {"x1"}, {{"x2", "4"}}, "5"),
                     6, "name 'x2' is already defined");
  EXPECT_TRACE_ERROR(
      k + call("split", {"x1"}, {{"x2", "4", "0"}, {"x2", "4", "0"}}, "5"), 3,
      "name 'x2' is already defined");
  EXPECT_TRACE_ERROR(k + constant("x1", "4"), 3,
                     "name 'x1' is already defined");
}

TEST(TraceReaderTest, CopyFromUnknownNameOrToExistingName) {
  std::string k = constant("x1", "4") + constant("x2", "4");
  EXPECT_TRACE_ERROR(k + copy("x3", "x9"), 5,
                     "COPY source 'x9' is not defined");
  EXPECT_TRACE_ERROR(k + copy("x2", "x1"), 5, "name 'x2' is already defined");
  EXPECT_TRACE_ERROR(k + copy("x1", "x1"), 5, "name 'x1' is already defined");
}

TEST(TraceReaderTest, CopyFromOfUnknownNames) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR(k + copy_from("x9", "x1"), 3,
                     "COPY_FROM destination 'x9' is not defined");
  EXPECT_TRACE_ERROR(k + copy_from("x1", "x9"), 3,
                     "COPY_FROM source 'x9' is not defined");
}

TEST(TraceReaderTest, MutateWithBadIndexLists) {
  std::string k = constant("x1", "4") + constant("x2", "4");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1", "x2"}, "[]", "1"), 5,
                     "non-empty list");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1", "x2"}, "0", "1"), 5,
                     "non-empty list");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1", "x2"}, "{\"a\":0}", "1"), 5,
                     "non-empty list");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1", "x2"}, "[2]", "1"), 5,
                     "MUTATE index 2 is not an argument index");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1", "x2"}, "[-1]", "1"), 5,
                     "MUTATE index -1");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1", "x2"}, "[\"0\"]", "1"), 5,
                     "MUTATE index \"0\"");
  EXPECT_TRACE_ERROR(k + mutate("add_", {"x1", "x2"}, "[0.5]", "1"), 5,
                     "MUTATE index 0.5");
  EXPECT_TRACE_ERROR(k + mutate("zero_", {}, "[0]", "1"), 5, "MUTATE index 0");
}

// An index list naming the same argument twice is malformed: the mutated
// value would lose two references for one handle. The error must come at the
// MUTATE line even when the value has a second handle (a COPY), instead of
// surfacing later (or never) as a release mismatch.
TEST(TraceReaderTest, MutateWithRepeatedIndexIsRejected) {
  std::string text = constant("x1", "4") + copy("x2", "x1") +
                     mutate("add_", {"x1"}, "[0,0]", "1");
  EXPECT_TRACE_ERROR(text, 4, "MUTATE");
}

TEST(TraceReaderTest, TraceEndingRightAfterCallOrConstant) {
  std::string k = constant("x1", "4");
  EXPECT_TRACE_ERROR(k + call_line("relu", {"x1"}, {"x2"}, "5"), 3,
                     "trace ends before the MEMORY line of 'x2'");
  EXPECT_TRACE_ERROR(
      k + call_line("relu", {"x1"}, {"x2"}, "5") + memory("x2", "4"), 4,
      "trace ends before the ALIAS line of 'x2'");
  EXPECT_TRACE_ERROR(k + call_line("split", {"x1"}, {"x2", "x3"}, "5") +
                         memory("x2", "4") + alias("x2", "0"),
                     5, "trace ends before the MEMORY line of 'x3'");
  EXPECT_TRACE_ERROR(k + "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x2\"}\n", 3,
                     "trace ends before the MEMORY line of 'x2'");
  // Without a final newline too.
  EXPECT_TRACE_ERROR("{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x2\"}", 1,
                     "trace ends before the MEMORY line of 'x2'");
}

TEST(TraceReaderTest, MemoryOrAliasLinesOnTheirOwn) {
  EXPECT_TRACE_ERROR(memory("x1", "4"), 1,
                     "MEMORY without a preceding CALL or CONSTANT");
  EXPECT_TRACE_ERROR(constant("x1", "4") + alias("x1", "-1"), 3,
                     "ALIAS without a preceding CALL or CONSTANT");
  // One pair too many after a complete CALL.
  EXPECT_TRACE_ERROR(constant("x1", "4") +
                         call("relu", {"x1"}, {{"x2", "4"}}, "5") +
                         memory("x2", "4"),
                     6, "MEMORY without a preceding CALL or CONSTANT");
  // MUTATE is not followed by MEMORY/ALIAS lines.
  EXPECT_TRACE_ERROR(constant("x1", "4") + mutate("relu_", {"x1"}, "[0]", "5") +
                         memory("x1", "4"),
                     4, "MEMORY without a preceding CALL or CONSTANT");
}

TEST(TraceReaderTest, ReleasingANameTwiceIsAnError) {
  EXPECT_TRACE_ERROR(constant("x1", "4") + release("x1") + release("x1"), 4,
                     "'x1' is released twice (first at line 3)");
  // Two handles to one value: each name can be released once.
  EXPECT_TRACE_ERROR(constant("x1", "4") + copy("x2", "x1") + release("x1") +
                         release("x2") + release("x2"),
                     6, "'x2' is released twice (first at line 5)");
  // After COPY_FROM, x1 and x2 hold one value with two references.
  EXPECT_TRACE_ERROR(constant("x1", "4") + constant("x2", "4") +
                         copy_from("x1", "x2") + release("x2") + release("x2"),
                     7, "'x2' is released twice");
}

TEST(TraceReaderTest, ANameCannotBeUsedAfterItsRelease) {
  EXPECT_TRACE_ERROR(constant("x1", "4") + release("x1") + copy("x2", "x1"), 4,
                     "COPY source 'x1' was released at line 3");
  EXPECT_TRACE_ERROR(constant("x1", "4") + release("x1") +
                         call_line("relu", {"x1"}, {"x2"}, "1") +
                         memory("x2", "4") + alias("x2", "-1"),
                     4, "argument 'x1' was released at line 3");
}

TEST(TraceReaderTest, FileThatCannotBeOpened) {
  const std::string path = "/nonexistent-dir-dtr-test/missing.log";
  try {
    read_trace_file(path);
    FAIL() << "no exception";
  } catch (const TraceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("cannot open"), std::string::npos) << m;
  }
}

TEST(TraceReaderTest, ErrorsFromAFileNameThePath) {
  auto path = std::filesystem::temp_directory_path() /
              ("dtr_trace_reader_test_" + std::to_string(::getpid()) + ".log");
  {
    std::ofstream out(path);
    out << constant("x1", "4") << "{\"INSTRUCTION\":\"BOGUS\"}\n";
  }
  try {
    read_trace_file(path.string());
    ADD_FAILURE() << "no exception";
  } catch (const TraceError& e) {
    std::string expected =
        "[" + path.string() + ":3] unknown instruction 'BOGUS'";
    EXPECT_EQ(std::string(e.what()), expected);
  }
  std::filesystem::remove(path);
}

TEST(TraceReaderTest, TraceErrorIsADtrError) {
  std::istringstream in("garbage\n");
  EXPECT_THROW(read_trace(in, "t"), dtr::Error);
}

// A value of the wrong type where the reader peeks at a field (the line that
// must be MEMORY or ALIAS) is still a TraceError naming that line, never a
// raw JSON library exception.
TEST(TraceReaderTest, WrongTypeInMemoryOrAliasLineIsATraceError) {
  std::string after_constant =
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":5,\"MEMORY\":\"4\",\"NAME\":\"x1\"}\n";
  EXPECT_TRUE(is_error_at(read_error(after_constant), 2, {}));
  std::string after_memory =
      constant("x1", "4") + call_line("relu", {"x1"}, {"x2"}, "5") +
      memory("x2", "4") +
      "{\"ALIAS\":\"-1\",\"INSTRUCTION\":[],\"NAME\":\"x2\"}\n";
  EXPECT_TRUE(is_error_at(read_error(after_memory), 5, {}));
}

// The START search looks at lines before the real start; whatever it finds
// there must never escape as anything but a TraceError.
TEST(TraceReaderTest, StartSearchNeverThrowsRawJsonErrors) {
  std::string text = "{\"INSTRUCTION\":5,\"NOTE\":\"START\"}\n" +
                     annotate("START") + constant("x1", "4");
  std::istringstream in(text);
  try {
    Program p = read_trace(in, "bad.log");
    EXPECT_EQ(p.ops.size(), 1u);  // the line is before START: ignored
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[bad.log:1] ", 0), 0u) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "raw exception escaped: " << e.what();
  }
}

TEST(TraceReaderTest, ReleaseOfUndefinedNameIsAnErrorWhenAsked) {
  TraceReadOptions strict;
  strict.ignore_undefined_release = false;
  std::string message = read_error(constant("x1", "4") + release("x9"), strict);
  EXPECT_TRUE(is_error_at(message, 3, {"RELEASE of undefined name 'x9'"}));
}

TEST(TraceReaderTest, LineNumbersCountSkippedAndBlankLines) {
  // Lines before START and blank lines still count.
  std::string text = constant("x0", "4") + "\n" + annotate("START") + "\n" +
                     constant("x1", "4") + "   \n" +
                     "{\"INSTRUCTION\":\"FOO\"}\n";
  EXPECT_TRACE_ERROR(text, 9, "unknown instruction 'FOO'");
}

TEST(TraceReaderTest, NamesDefinedBeforeStartAreNotDefinedAfterIt) {
  std::string text = constant("x1", "4") + annotate("START") +
                     call("relu", {"x1"}, {{"x2", "4"}}, "5");
  EXPECT_TRACE_ERROR(text, 4, "argument 'x1' is not defined");
}

// ===========================================================================
// Semantics of valid traces

TEST(TraceReaderTest, ConstantBecomesAConstantOpWithItsSize) {
  Program p = read(constant("x35415", "3456"), {}, "inception.log");
  EXPECT_EQ(p.source, "inception.log");
  ASSERT_EQ(p.ops.size(), 1u);
  const ProgramOp& op = p.ops[0];
  EXPECT_TRUE(op.constant);
  EXPECT_EQ(op.name, "constant");
  EXPECT_EQ(op.cost_ns, 0);
  EXPECT_TRUE(op.inputs.empty());
  ASSERT_EQ(op.outputs.size(), 1u);
  EXPECT_EQ(op.outputs[0].bytes, 3456);
  EXPECT_EQ(op.outputs[0].alias_of, -1);
  EXPECT_EQ(op.first_output, 0u);
  EXPECT_FALSE(op.backward);
  EXPECT_EQ(p.constant_count, 1u);
  EXPECT_EQ(p.value_count, 1u);
  EXPECT_EQ(p.total_cost_ns, 0);
  EXPECT_EQ(p.trace_ops(), 1u);
  // Still referenced at the end: pinned.
  EXPECT_EQ(steps_of(p), (std::vector<std::string>{"compute 0", "pin 0"}));
}

TEST(TraceReaderTest, ConstantOfZeroBytesIsAccepted) {
  Program p = read(constant("x1", "0"));
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].outputs[0].bytes, 0);
}

TEST(TraceReaderTest, CallWithMultipleOutputsAndAliases) {
  // A batch-norm-like op with an alias of each argument among its outputs.
  std::string text =
      constant("x1", "100") + constant("x2", "50") +
      call("split_norm", {"x1", "x2"},
           {{"x3", "100", "0"}, {"x4", "30"}, {"x5", "50", "1"}, {"x6", "0"}},
           "7");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 3u);
  const ProgramOp& op = p.ops[2];
  EXPECT_EQ(op.name, "split_norm");
  EXPECT_FALSE(op.constant);
  EXPECT_EQ(op.cost_ns, 7);
  EXPECT_EQ(op.inputs, (std::vector<ValueId>{0, 1}));
  EXPECT_EQ(op.first_output, 2u);
  ASSERT_EQ(op.outputs.size(), 4u);
  // Alias outputs own no bytes, whatever MEMORY logged.
  EXPECT_EQ(op.outputs[0].bytes, 0);
  EXPECT_EQ(op.outputs[0].alias_of, 0);
  EXPECT_EQ(op.outputs[1].bytes, 30);
  EXPECT_EQ(op.outputs[1].alias_of, -1);
  EXPECT_EQ(op.outputs[2].bytes, 0);
  EXPECT_EQ(op.outputs[2].alias_of, 1);
  EXPECT_EQ(op.outputs[3].bytes, 0);
  EXPECT_EQ(op.outputs[3].alias_of, -1);
  EXPECT_EQ(p.value_count, 6u);
  EXPECT_EQ(p.total_cost_ns, 7);
  EXPECT_EQ(p.constant_count, 2u);
  EXPECT_EQ(steps_of(p), (std::vector<std::string>{
                             "compute 0", "compute 1", "compute 2", "pin 0",
                             "pin 1", "pin 2", "pin 3", "pin 4", "pin 5"}));
}

TEST(TraceReaderTest, CallWithoutArguments) {
  Program p = read(call("randn", {}, {{"x1", "64"}}, "3"));
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_FALSE(p.ops[0].constant);
  EXPECT_TRUE(p.ops[0].inputs.empty());
  EXPECT_EQ(p.ops[0].outputs[0].bytes, 64);
  EXPECT_EQ(p.constant_count, 0u);
}

TEST(TraceReaderTest, LaterOpsUseTheValuesOfTheirArguments) {
  std::string text = constant("x1", "8") +
                     call("f", {"x1"}, {{"x2", "16"}, {"x3", "8", "0"}}, "1") +
                     call("g", {"x3", "x2", "x1", "x3"}, {{"x4", "4"}}, "2");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[2].inputs, (std::vector<ValueId>{2, 1, 0, 2}));
  EXPECT_EQ(p.ops[2].first_output, 3u);
  EXPECT_EQ(p.total_cost_ns, 3);
}

TEST(TraceReaderTest, CopyAddsARetainStep) {
  std::string text = constant("x1", "8") + copy("x2", "x1") + release("x1") +
                     call("f", {"x2"}, {{"x3", "8"}}, "1");
  Program p = read(text);
  EXPECT_EQ(p.value_count, 2u);  // COPY makes no new value
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[1].inputs, (std::vector<ValueId>{0}));
  EXPECT_EQ(steps_before_pins(p),
            (std::vector<std::string>{"compute 0", "retain 0", "release 0",
                                      "compute 1"}));
  // x1's value keeps one reference (x2): pinned, like x3's.
  EXPECT_EQ(unique_pins(p), (std::vector<ValueId>{0, 1}));
}

TEST(TraceReaderTest, ReleaseAddsAReleaseStepAndReleasedValuesAreNotPinned) {
  std::string text = constant("x1", "8") +
                     call("f", {"x1"}, {{"x2", "8"}}, "1") +
                     call("g", {"x2"}, {{"x3", "8"}}, "1") + release("x2");
  Program p = read(text);
  EXPECT_EQ(steps_of(p),
            (std::vector<std::string>{"compute 0", "compute 1", "compute 2",
                                      "release 1", "pin 0", "pin 2"}));
}

TEST(TraceReaderTest, ReleaseOfUndefinedNameIsIgnoredByDefault) {
  std::string text = release("x0") + constant("x1", "8") + release("x99");
  Program p = read(text);
  EXPECT_EQ(steps_of(p), (std::vector<std::string>{"compute 0", "pin 0"}));
}

TEST(TraceReaderTest, ReleaseOfDefinedNameIsFineWhenStrict) {
  TraceReadOptions strict;
  strict.ignore_undefined_release = false;
  Program p = read(constant("x1", "8") + release("x1"), strict);
  EXPECT_EQ(steps_of(p), (std::vector<std::string>{"compute 0", "release 0"}));
}

TEST(TraceReaderTest, MutateBecomesCopyOnWrite) {
  std::string text = constant("x1", "100") + constant("x2", "8") +
                     mutate("add_", {"x1", "x2"}, "[0]", "5") +
                     call("f", {"x1"}, {{"x3", "4"}}, "1");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 4u);
  const ProgramOp& m = p.ops[2];
  EXPECT_EQ(m.name, "add_");
  EXPECT_FALSE(m.constant);
  EXPECT_EQ(m.cost_ns, 5);
  EXPECT_EQ(m.inputs, (std::vector<ValueId>{0, 1}));
  EXPECT_EQ(m.first_output, 2u);
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].bytes, 100);  // the mutated argument's size
  EXPECT_EQ(m.outputs[0].alias_of, -1);
  // x1 now names the new value.
  EXPECT_EQ(p.ops[3].inputs, (std::vector<ValueId>{2}));
  EXPECT_EQ(p.total_cost_ns, 6);
  EXPECT_EQ(p.value_count, 4u);
  // The old value loses x1's reference; pins follow the order the names
  // first appeared (x1 -> value 2, x2 -> value 1, x3 -> value 3).
  EXPECT_EQ(steps_of(p), (std::vector<std::string>{
                             "compute 0", "compute 1", "compute 2", "release 0",
                             "compute 3", "pin 2", "pin 1", "pin 3"}));
}

TEST(TraceReaderTest, MutateOfSeveralArguments) {
  std::string text = constant("x1", "100") + constant("x2", "8") +
                     constant("x3", "30") +
                     mutate("addcmul_", {"x1", "x2", "x3"}, "[2,0]", "5");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 4u);
  const ProgramOp& m = p.ops[3];
  ASSERT_EQ(m.outputs.size(), 2u);
  EXPECT_EQ(m.outputs[0].bytes, 30);   // argument 2 (x3)
  EXPECT_EQ(m.outputs[1].bytes, 100);  // argument 0 (x1)
  EXPECT_EQ(m.first_output, 3u);
  // x3 -> value 3, x1 -> value 4; the old values lose their references in
  // the order of the index list.
  EXPECT_EQ(steps_of(p),
            (std::vector<std::string>{"compute 0", "compute 1", "compute 2",
                                      "compute 3", "release 2", "release 0",
                                      "pin 4", "pin 1", "pin 3"}));
}

TEST(TraceReaderTest, MutateThroughAnAliasUsesTheAliasedStorageSize) {
  // x2 is a view of x1 (logged with x1's storage size, but owning 0 bytes);
  // x4 is a view of x3, whose MEMORY line logs something else.
  std::string text =
      constant("x1", "400") + call("view", {"x1"}, {{"x2", "400", "0"}}, "1") +
      constant("x3", "64") + call("select", {"x3"}, {{"x4", "999", "0"}}, "1") +
      mutate("relu_", {"x2"}, "[0]", "3") + mutate("mul_", {"x4"}, "[0]", "3") +
      mutate("zero_", {"x2"}, "[0]", "3");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 7u);
  EXPECT_EQ(p.ops[1].outputs[0].bytes, 0);
  EXPECT_EQ(p.ops[3].outputs[0].bytes, 0);
  EXPECT_EQ(p.ops[4].outputs[0].bytes, 400);  // x1's storage
  EXPECT_EQ(p.ops[5].outputs[0].bytes, 64);   // x3's storage, not 999
  // The copy-on-write result is a new storage: mutating it again keeps the
  // size.
  EXPECT_EQ(p.ops[6].outputs[0].bytes, 400);
  EXPECT_EQ(p.ops[6].inputs, (std::vector<ValueId>{4}));
}

TEST(TraceReaderTest, CopyFromRepointsTheDestination) {
  std::string text = constant("x1", "100") + constant("x2", "200") +
                     copy_from("x1", "x2") +
                     call("f", {"x1"}, {{"x3", "4"}}, "1");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[2].inputs, (std::vector<ValueId>{1}));
  EXPECT_EQ(p.value_count, 3u);
  EXPECT_EQ(steps_before_pins(p),
            (std::vector<std::string>{"compute 0", "compute 1", "release 0",
                                      "retain 1", "compute 2"}));
  // Value 0 lost its only handle: not pinned. Value 1 (held by x1 and x2,
  // x1 the first name) and value 2 are.
  EXPECT_EQ(unique_pins(p), (std::vector<ValueId>{1, 2}));
}

TEST(TraceReaderTest, OutputConditionPinsReferencedValuesInFirstNameOrder) {
  // Names appear as x5, x1, x2, x3; values are created 0 (x5), 1 (x1), ...
  // x1 is later mutated (value 4), so first-name order is 0, 4, 2 (x3 was
  // released).
  std::string text = constant("x5", "8") + constant("x1", "8") +
                     call("f", {"x5"}, {{"x2", "8"}}, "1") +
                     call("g", {"x2"}, {{"x3", "8"}}, "1") + release("x3") +
                     mutate("add_", {"x1", "x2"}, "[0]", "1");
  Program p = read(text);
  std::vector<ValueId> pins = pinned_values(p);
  // Pin steps come last.
  ASSERT_GE(p.steps.size(), pins.size());
  for (std::size_t i = p.steps.size() - pins.size(); i < p.steps.size(); ++i) {
    EXPECT_EQ(p.steps[i].kind, StepKind::kPin) << "step " << i;
  }
  EXPECT_EQ(pins, (std::vector<ValueId>{0, 4, 2}));
}

TEST(TraceReaderTest, ValueWithTwoHandlesIsPinnedInItsFirstNamesPlace) {
  std::string text =
      constant("x1", "8") + constant("x2", "8") + copy("x3", "x1");
  Program p = read(text);
  EXPECT_EQ(unique_pins(p), (std::vector<ValueId>{0, 1}));
  EXPECT_EQ(steps_before_pins(p),
            (std::vector<std::string>{"compute 0", "compute 1", "retain 0"}));
}

TEST(TraceReaderTest, ExplicitPinAddsAPinStep) {
  std::string text =
      constant("x1", "8") + call("f", {"x1"}, {{"x2", "8"}}, "1") +
      "{\"INSTRUCTION\":\"PIN\",\"NAME\":\"x2\"}\n" + release("x2");
  Program p = read(text);
  EXPECT_EQ(steps_of(p),
            (std::vector<std::string>{"compute 0", "compute 1", "pin 1",
                                      "release 1", "pin 0"}));
}

TEST(TraceReaderTest, UnpinAddsAnUnpinStep) {
  std::string text =
      constant("x1", "8") + call("f", {"x1"}, {{"x2", "8"}}, "1") +
      "{\"INSTRUCTION\":\"PIN\",\"NAME\":\"x2\"}\n" +
      "{\"INSTRUCTION\":\"UNPIN\",\"NAME\":\"x2\"}\n" + release("x2");
  Program p = read(text);
  EXPECT_EQ(steps_of(p),
            (std::vector<std::string>{"compute 0", "compute 1", "pin 1",
                                      "unpin 1", "release 1", "pin 0"}));
}

TEST(TraceReaderTest, UnpinOfAReleasedNameIsAnError) {
  EXPECT_TRACE_ERROR(constant("x1", "8") + release("x1") +
                         "{\"INSTRUCTION\":\"UNPIN\",\"NAME\":\"x1\"}\n",
                     4, "UNPIN target 'x1' was released at line 3");
}

TEST(TraceReaderTest, BackwardFlagAfterAnnotateBackward) {
  std::string text =
      constant("x1", "8") + call("f", {"x1"}, {{"x2", "8"}}, "1") +
      annotate("BACKWARD") + call("g", {"x2"}, {{"x3", "8"}}, "1") +
      mutate("add_", {"x3"}, "[0]", "1");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 4u);
  EXPECT_FALSE(p.ops[0].backward);
  EXPECT_FALSE(p.ops[1].backward);
  EXPECT_TRUE(p.ops[2].backward);
  EXPECT_TRUE(p.ops[3].backward);
}

TEST(TraceReaderTest, BackwardFlagFromAnOpNamedBackward) {
  std::string text =
      constant("x1", "8") + call("relu", {"x1"}, {{"x2", "8"}}, "1") +
      call("threshold_backward", {"x2", "x1"}, {{"x3", "8"}}, "1") +
      call("mul", {"x3"}, {{"x4", "8"}}, "1");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 4u);
  EXPECT_FALSE(p.ops[1].backward);
  EXPECT_TRUE(p.ops[2].backward);  // the op itself
  EXPECT_TRUE(p.ops[3].backward);  // and everything after it
}

// ANNOTATE STEP (written by the LibTorch layer at each begin_step): where
// each training step begins in the schedule; a new step is a forward pass.
TEST(TraceReaderTest, StepMarksGiveStepStartsAndEndTheBackward) {
  std::string text = annotate("STEP") + constant("x1", "8") +
                     call("f", {"x1"}, {{"x2", "8"}}, "1") +
                     annotate("BACKWARD") +
                     call("g", {"x2"}, {{"x3", "8"}}, "1") + release("x2") +
                     annotate("STEP") + annotate("STEP") +  // the same boundary
                     call("f", {"x3"}, {{"x4", "8"}}, "1");
  Program p = read(text);
  EXPECT_EQ(p.step_starts, (std::vector<std::size_t>{0, 4}));
  EXPECT_EQ(steps_of(p)[4], "compute 3");
  EXPECT_TRUE(p.ops[2].backward);
  EXPECT_FALSE(p.ops[3].backward);  // the second step's forward
}

TEST(TraceReaderTest, ATraceWithoutStepMarksHasNoStepStarts) {
  Program p = read(constant("x1", "8") + call("f", {"x1"}, {{"x2", "8"}}, "1"));
  EXPECT_TRUE(p.step_starts.empty());
}

TEST(TraceReaderTest, OtherAnnotationsAreIgnored) {
  std::string text = constant("x1", "8") + annotate("SOMETHING") +
                     call("f", {"x1"}, {{"x2", "8"}}, "1");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_FALSE(p.ops[1].backward);
}

TEST(TraceReaderTest, EverythingBeforeTheFirstStartIsSkipped) {
  std::string text =
      constant("x1", "1000") + call("warmup", {"x1"}, {{"x2", "1000"}}, "99") +
      annotate("BACKWARD") + "this line is not JSON\n" + annotate("START") +
      constant("x1", "8") + call("f", {"x1"}, {{"x2", "16"}}, "3") +
      annotate("START") + call("g", {"x2"}, {{"x3", "4"}}, "2");
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[0].outputs[0].bytes, 8);
  EXPECT_EQ(p.ops[1].name, "f");
  EXPECT_EQ(p.ops[2].name, "g");
  EXPECT_FALSE(p.ops[1].backward);  // the skipped BACKWARD does not count
  EXPECT_FALSE(p.ops[2].backward);  // a second START is just an annotation
  EXPECT_EQ(p.total_cost_ns, 5);
  EXPECT_EQ(p.value_count, 3u);
  EXPECT_EQ(p.constant_count, 1u);
}

TEST(TraceReaderTest, WithoutStartNothingIsSkipped) {
  std::string text =
      constant("x1", "8") + call("f", {"x1"}, {{"x2", "16"}}, "3");
  Program p = read(text);
  EXPECT_EQ(p.ops.size(), 2u);
  // An op merely named like the annotation does not start anything.
  std::string named = constant("x1", "8") +
                      call("START", {"x1"}, {{"x2", "16"}}, "3") +
                      call("f", {"x2"}, {{"x3", "16"}}, "3");
  EXPECT_EQ(read(named).ops.size(), 3u);
}

TEST(TraceReaderTest, SkipToStartCanBeTurnedOff) {
  std::string text = constant("x1", "1000") + annotate("START") +
                     call("f", {"x1"}, {{"x2", "16"}}, "3");
  TraceReadOptions all;
  all.skip_to_start = false;
  Program p = read(text, all);
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_TRUE(p.ops[0].constant);
  EXPECT_EQ(p.ops[1].inputs, (std::vector<ValueId>{0}));
  // With skipping (the default) x1 is undefined after START.
  EXPECT_THROW(read(text), TraceError);
  // Lines before START are parsed when skipping is off.
  std::string garbage = "garbage\n" + annotate("START") + constant("x1", "8");
  EXPECT_EQ(read(garbage).ops.size(), 1u);
  EXPECT_TRUE(is_error_at(read_error(garbage, all), 1, {"not valid JSON"}));
}

TEST(TraceReaderTest, NumbersAcceptedAsStringsAndAsJsonIntegers) {
  std::string as_ints =
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":100,\"NAME\":\"x1\"}\n"
      "{\"ARGS\":[\"x1\"],\"INSTRUCTION\":\"CALL\",\"NAME\":\"f\","
      "\"RESULT\":[\"x2\",\"x3\"],\"TIME\":5}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":100,\"NAME\":\"x2\"}\n"
      "{\"ALIAS\":0,\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"x2\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":32,\"NAME\":\"x3\"}\n"
      "{\"ALIAS\":-1,\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"x3\"}\n"
      "{\"ARGS\":[\"x3\"],\"INSTRUCTION\":\"MUTATE\",\"MUTATE\":[0],"
      "\"NAME\":\"relu_\",\"TIME\":7}\n";
  std::string as_strings =
      constant("x1", "100") +
      call("f", {"x1"}, {{"x2", "100", "0"}, {"x3", "32"}}, "5") +
      mutate("relu_", {"x3"}, "[0]", "7");
  Program a = read(as_ints);
  Program b = read(as_strings);
  ASSERT_EQ(a.ops.size(), 3u);
  ASSERT_EQ(b.ops.size(), 3u);
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a.ops[i].cost_ns, b.ops[i].cost_ns);
    ASSERT_EQ(a.ops[i].outputs.size(), b.ops[i].outputs.size());
    for (std::size_t k = 0; k < a.ops[i].outputs.size(); ++k) {
      EXPECT_EQ(a.ops[i].outputs[k].bytes, b.ops[i].outputs[k].bytes);
      EXPECT_EQ(a.ops[i].outputs[k].alias_of, b.ops[i].outputs[k].alias_of);
    }
  }
  EXPECT_EQ(a.ops[1].cost_ns, 5);
  EXPECT_EQ(a.ops[1].outputs[0].alias_of, 0);
  EXPECT_EQ(a.ops[1].outputs[1].bytes, 32);
  EXPECT_EQ(a.ops[2].outputs[0].bytes, 32);
  EXPECT_EQ(a.total_cost_ns, 12);
  EXPECT_EQ(steps_of(a), steps_of(b));
}

TEST(TraceReaderTest, LargeNumbersAreKeptExactly) {
  // Sizes beyond 32 bits occur in the paper's logs (10 GB peaks).
  // The largest size accepted is 2^50 - 1 bytes.
  Program p =
      read(constant("x1", "181870592000") +
           call("f", {"x1"}, {{"x2", "1125899906842623"}}, "1213481000000"));
  EXPECT_EQ(p.ops[0].outputs[0].bytes, 181870592000);
  EXPECT_EQ(p.ops[1].outputs[0].bytes, 1125899906842623);
  EXPECT_EQ(p.ops[1].cost_ns, 1213481000000);
}

TEST(TraceReaderTest, BlankLinesAreIgnored) {
  std::string with_blanks = "\n" + constant("x1", "8") + "\n  \n\t\n" +
                            call("f", {"x1"}, {{"x2", "8"}}, "1") + "\n" +
                            release("x2") + "\n\n";
  std::string without = constant("x1", "8") +
                        call("f", {"x1"}, {{"x2", "8"}}, "1") + release("x2");
  Program a = read(with_blanks);
  Program b = read(without);
  EXPECT_EQ(a.ops.size(), 2u);
  EXPECT_EQ(steps_of(a), steps_of(b));
  EXPECT_EQ(steps_of(a), (std::vector<std::string>{"compute 0", "compute 1",
                                                   "release 1", "pin 0"}));
}

TEST(TraceReaderTest, MissingFinalNewlineIsFine) {
  std::string text = constant("x1", "8") + release("x1");
  text.pop_back();
  EXPECT_EQ(steps_of(read(text)),
            (std::vector<std::string>{"compute 0", "release 0"}));
}

// Logs copied through Windows end lines with "\r\n": they must read exactly
// like the "\n" version, and errors must keep the right line numbers.
TEST(TraceReaderTest, WindowsLineEndingsAreParsedLikeUnixOnes) {
  std::string unix_text =
      annotate("START") + constant("x1", "100") +
      call("f", {"x1"}, {{"x2", "64"}, {"x3", "100", "0"}}, "5") +
      copy("x4", "x2") + mutate("relu_", {"x2"}, "[0]", "2") + release("x4") +
      "\n";
  std::string dos_text;
  for (char c : unix_text) {
    if (c == '\n') dos_text += '\r';
    dos_text += c;
  }
  Program a = read(unix_text);
  Program b = read(dos_text);
  ASSERT_EQ(b.ops.size(), a.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(b.ops[i].name, a.ops[i].name);
    EXPECT_EQ(b.ops[i].cost_ns, a.ops[i].cost_ns);
    EXPECT_EQ(b.ops[i].inputs, a.ops[i].inputs);
    ASSERT_EQ(b.ops[i].outputs.size(), a.ops[i].outputs.size());
    for (std::size_t k = 0; k < a.ops[i].outputs.size(); ++k) {
      EXPECT_EQ(b.ops[i].outputs[k].bytes, a.ops[i].outputs[k].bytes);
      EXPECT_EQ(b.ops[i].outputs[k].alias_of, a.ops[i].outputs[k].alias_of);
    }
  }
  EXPECT_EQ(steps_of(b), steps_of(a));
  EXPECT_EQ(a.ops.size(), 3u);
  EXPECT_EQ(a.ops[2].outputs[0].bytes, 64);

  std::string dos_bad = constant("x1", "8") + "{\"INSTRUCTION\":\"FOO\"}\n";
  std::string crlf;
  for (char c : dos_bad) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  std::string message = read_error(crlf);
  EXPECT_TRUE(is_error_at(message, 3, {"unknown instruction 'FOO'"}));
  // The name is quoted without the carriage return.
  EXPECT_EQ(message.find('\r'), std::string::npos);
}

TEST(TraceReaderTest, TheInceptionExcerptFromThePaperReads) {
  // Literal lines of simrd/logs/inceptionv4-...log (the authors' trace of
  // Inception v4), with the three elided MEMORY/ALIAS pairs filled in.
  std::string text =
      "{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}\n"
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x35415\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"3456\",\"NAME\":\"x35415\"}\n"
      "{\"DST\":\"x35416\",\"INSTRUCTION\":\"COPY\",\"SRC\":\"x35415\"}\n"
      "{\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"x35415\"}\n" +
      constant("x36760", "1000") + constant("x35418", "10") +
      constant("x35420", "10") + constant("x35421", "10") +
      constant("x35422", "10") +
      "{\"ARGS\":[\"x36760\",\"x35416\"],\"INSTRUCTION\":\"CALL\",\"NAME\":"
      "\"cudnn_convolution\",\"RESULT\":[\"x36764\"],\"TIME\":\"621158\"}\n" +
      memory("x36764", "2000") + alias("x36764", "-1") +
      "{\"ARGS\":[\"x36764\",\"x35418\",\"x35420\",\"x35421\",\"x35422\"],"
      "\"INSTRUCTION\":\"CALL\",\"NAME\":\"cudnn_batch_norm\",\"RESULT\":"
      "[\"x36771\",\"x36772\",\"x36773\",\"x36774\"],\"TIME\":\"1213481\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"181870592\",\"NAME\":"
      "\"x36771\"}\n"
      "{\"ALIAS\":\"-1\",\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"x36771\"}\n" +
      memory("x36772", "1024") + alias("x36772", "-1") +
      memory("x36773", "1024") + alias("x36773", "-1") + memory("x36774", "0") +
      alias("x36774", "-1") +
      "{\"ARGS\":[\"x36771\"],\"INSTRUCTION\":\"MUTATE\",\"MUTATE\":[0],"
      "\"NAME\":\"relu_\",\"TIME\":\"1301658\"}\n";
  Program p = read(text);
  ASSERT_EQ(p.ops.size(), 9u);  // 6 constants, 2 calls, 1 mutate
  EXPECT_EQ(p.constant_count, 6u);
  EXPECT_EQ(p.total_cost_ns, 621158 + 1213481 + 1301658);
  const ProgramOp& bn = p.ops[7];
  EXPECT_EQ(bn.name, "cudnn_batch_norm");
  EXPECT_EQ(bn.inputs.size(), 5u);
  ASSERT_EQ(bn.outputs.size(), 4u);
  EXPECT_EQ(bn.outputs[0].bytes, 181870592);
  EXPECT_EQ(bn.outputs[3].bytes, 0);
  EXPECT_EQ(p.ops[8].name, "relu_");
  EXPECT_EQ(p.ops[8].outputs[0].bytes, 181870592);
  // The conv's weight argument is the COPY (x35416), i.e. the constant.
  EXPECT_EQ(p.ops[6].inputs, (std::vector<ValueId>{1, 0}));
}

}  // namespace
}  // namespace dtr::trace

namespace dtr::trace {
namespace {

TEST(TraceReaderLimitsTest, EmptyTracesAndHugeSizesAreRejected) {
  std::istringstream empty("");
  EXPECT_THROW(read_trace(empty, "empty.log"), TraceError);
  std::istringstream only_start(
      "{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}\n");
  EXPECT_THROW(read_trace(only_start, "start.log"), TraceError);
  std::istringstream huge(
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"9000000000000000000\","
      "\"NAME\":\"x1\"}\n");
  try {
    read_trace(huge, "huge.log");
    FAIL() << "no exception";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("[huge.log:2]"), std::string::npos);
  }
}

TEST(TraceReaderLimitsTest, BinaryInputIsReportedInPrintableCharacters) {
  std::istringstream binary(std::string("\x7f"
                                        "ELF\x02\x01\x01\x00",
                                        8) +
                            "\n");
  try {
    read_trace(binary, "bin.log");
    FAIL() << "no exception";
  } catch (const TraceError& e) {
    for (char c : std::string(e.what())) {
      EXPECT_TRUE(c >= 32 && c < 127) << int(c);
    }
  }
}

// ---------------------------------------------------------------------------
// Absurd numbers: every class is rejected at the line that breaks it.

std::string constants_of(int n, const std::string& bytes) {
  std::string text;
  for (int i = 1; i <= n; ++i) text += constant("x" + std::to_string(i), bytes);
  return text;
}

TEST(TraceReaderLimitsTest, TimesWhoseSumOverflowsNameTheCallThatBreaksIt) {
  // Three CALLs of 2^63 - 1 ns each used to wrap the total cost.
  const std::string max = "9223372036854775807";
  std::string text = constant("x1", "4") +
                     call("f", {"x1"}, {{"x2", "4"}}, max) +
                     call("f", {"x2"}, {{"x3", "4"}}, max) +
                     call("f", {"x3"}, {{"x4", "4"}}, max);
  EXPECT_TRACE_ERROR(text, 3, "TIME 9223372036854775807",
                     "total cost past 2^61 ns");
  // Each within range, the second one breaks the sum.
  const std::string big = "2000000000000000000";
  text = constant("x1", "4") + call("f", {"x1"}, {{"x2", "4"}}, big) +
         mutate("add_", {"x2"}, "[0]", big);
  EXPECT_TRACE_ERROR(text, 6, "TIME 2000000000000000000",
                     "2000000000000000000 ns before it");
}

TEST(TraceReaderLimitsTest, SizesWhoseSumOverflowsNameTheMemoryLine) {
  // 9,000 tensors of 2^50 bytes: the 2048th brings the sum to 2^61.
  const std::string peta = "1125899906842624";
  EXPECT_TRACE_ERROR(constants_of(9000, peta), 2 * 2048, "the size of 'x2048'",
                     "past 2^61 bytes");
  std::string text =
      constants_of(2047, peta) + call("f", {"x1"}, {{"y", peta}}, "1");
  EXPECT_TRACE_ERROR(text, 2 * 2047 + 2, "the size of 'y'");
  // An alias owns no bytes: viewing a huge storage costs nothing.
  text =
      constants_of(2047, peta) + call("view", {"x1"}, {{"y", peta, "0"}}, "1");
  EXPECT_EQ(read(text).ops.size(), 2048u);
  // A MUTATE copies its argument's storage: that copy counts too.
  text = constants_of(2047, peta) + mutate("add_", {"x1"}, "[0]", "1");
  EXPECT_TRACE_ERROR(text, 2 * 2047 + 1, "the size of 'x1$'");
}

TEST(TraceReaderLimitsTest, NumbersOutsideInt64AreOutOfRange) {
  std::string text =
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":"
      "18446744073709551615,\"NAME\":\"x1\"}\n";
  EXPECT_TRACE_ERROR(text, 2, "MEMORY = 18446744073709551615", "out of range");
  EXPECT_TRACE_ERROR(constant("x1", "99999999999999999999"), 2,
                     "MEMORY = \"99999999999999999999\"", "out of range");
  EXPECT_TRACE_ERROR(constant("x1", "4") + call("f", {"x1"}, {{"x2", "4"}},
                                                "-99999999999999999999"),
                     3, "TIME", "out of range");
  EXPECT_TRACE_ERROR(
      constant("x1", "4") +
          call("f", {"x1"}, {{"x2", "4", "99999999999999999999"}}, "1"),
      5, "ALIAS", "out of range");
}

TEST(TraceReaderLimitsTest, NegativeSizesAndTimesAreRejectedInEveryForm) {
  std::string text =
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":-5,"
      "\"NAME\":\"x1\"}\n";
  EXPECT_TRACE_ERROR(text, 2, "negative MEMORY -5");
  EXPECT_TRACE_ERROR(
      constant("x1", "4") + call("f", {"x1"}, {{"x2", "-1"}}, "1"), 4,
      "negative MEMORY -1");
  EXPECT_TRACE_ERROR(constant("x1", "4") +
                         mutate("add_", {"x1"}, "[0]", "-9223372036854775808"),
                     3, "negative TIME");
}

TEST(TraceReaderLimitsTest, IndicesOutOfRangeAreRejected) {
  std::string base = constant("x1", "4");
  EXPECT_TRACE_ERROR(base + call("f", {"x1"}, {{"x2", "4", "1"}}, "1"), 5,
                     "ALIAS 1 of 'x2' is not an argument index");
  EXPECT_TRACE_ERROR(base + call("f", {"x1"}, {{"x2", "4", "-2"}}, "1"), 5,
                     "ALIAS -2");
  EXPECT_TRACE_ERROR(
      base + mutate("add_", {"x1"}, "[18446744073709551615]", "1"), 3,
      "MUTATE index 18446744073709551615 is not an argument index");
  EXPECT_TRACE_ERROR(base + mutate("add_", {"x1"}, "[-1]", "1"), 3,
                     "MUTATE index -1");
}

// ---------------------------------------------------------------------------
// COPY_FROM of a value onto itself

TEST(TraceReaderTest, CopyFromOntoTheSameValueIsANoOp) {
  // x.data = x in PyTorch changes nothing. Dropping the only reference
  // before adding the new one used to free the value for good, and the
  // replay then failed without a file or line.
  std::string text = constant("x1", "4") +
                     call("f", {"x1"}, {{"x2", "8"}}, "1") +
                     copy_from("x2", "x2") + copy("x3", "x2") +
                     copy_from("x3", "x2") +  // two names, one value
                     call("g", {"x2"}, {{"x4", "8"}}, "1");
  Program p = read(text);
  EXPECT_EQ(steps_before_pins(p),
            (std::vector<std::string>{"compute 0", "compute 1", "retain 1",
                                      "compute 2"}));
  const sim::Baseline base = sim::compute_baseline(p);
  EXPECT_EQ(base.compute_ns, 2);
  for (const char* h : {"lru", "dtr"}) {
    sim::SimConfig config;
    config.heuristic = h;
    config.budget_ratio = 1.0;
    EXPECT_EQ(sim::simulate(p, base, config).status, sim::SimStatus::kOk) << h;
  }
}

// ---------------------------------------------------------------------------
// Streaming: the text is read line by line, never held.

// An input of `lines` generated lines (a CONSTANT, then CALLs), produced one
// at a time; counts how many lines the reader has pulled.
class GeneratedTrace : public std::streambuf {
 public:
  GeneratedTrace(std::size_t lines, std::size_t bad_line)
      : lines_(lines), bad_line_(bad_line) {}
  std::size_t produced() const { return produced_; }

 protected:
  int_type underflow() override {
    if (produced_ == lines_) return traits_type::eof();
    ++produced_;
    current_ = line(produced_);
    setg(current_.data(), current_.data(), current_.data() + current_.size());
    return traits_type::to_int_type(current_[0]);
  }

 private:
  std::string line(std::size_t n) const {
    if (n == bad_line_) return "{oops\n";
    if (n == 1) return annotate("START");
    if (n == 2) return constant("x1", "4").substr(0, 39);  // CONSTANT
    if (n == 3) return constant("x1", "4").substr(39);     // MEMORY
    // Lines 4, 7, 10, ...: CALL f(x1) -> y<n>; then MEMORY and ALIAS.
    const std::size_t first = 4 + (n - 4) / 3 * 3;
    const std::string name = "y" + std::to_string(first);
    switch ((n - 4) % 3) {
      case 0:
        return call_line("f", {"x1"}, {name}, "1");
      case 1:
        return memory(name, "4");
      default:
        return alias(name, "-1");
    }
  }
  std::size_t lines_, bad_line_, produced_ = 0;
  std::string current_;
};

TEST(TraceReaderStreamingTest, ReadsAGeneratedStreamLineByLine) {
  GeneratedTrace source(3 + 3 * 20000, 0);
  std::istream in(&source);
  Program p = read_trace(in, "gen.log");
  EXPECT_EQ(p.ops.size(), 20001u);
  EXPECT_EQ(source.produced(), 3u + 3 * 20000);
}

TEST(TraceReaderStreamingTest, StopsAtTheFirstBadLineWithoutReadingOn) {
  // The reader used to load the whole input before looking at any line.
  GeneratedTrace source(3 + 3 * 100000, 1000);
  std::istream in(&source);
  try {
    read_trace(in, "gen.log");
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[gen.log:1000] ", 0), 0u)
        << e.what();
  }
  EXPECT_LE(source.produced(), 1001u);
}

// A stream whose every read fails, as reading a directory or /proc/self/mem
// does: the file buffer throws std::ios_base::failure from underflow.
class FailingBuffer : public std::streambuf {
 public:
  int reads() const { return reads_; }

 protected:
  int_type underflow() override {
    ++reads_;
    throw std::ios_base::failure("read failed",
                                 std::make_error_code(std::errc::io_error));
  }

 private:
  int reads_ = 0;
};

TEST(TraceReaderReadErrorTest, AReadErrorBeforeAnyStartEndsTheRead) {
  // Before a START the reader holds errors back and reads on, looking for
  // one; a read error must end that search, not repeat it forever.
  FailingBuffer source;
  std::istream in(&source);
  try {
    read_trace(in, "broken.log");
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[broken.log:1] read error", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(source.reads(), 1);
}

TEST(TraceReaderReadErrorTest, ADirectoryIsNamedAsOne) {
  std::string dir = std::filesystem::temp_directory_path().string();
  try {
    read_trace_file(dir);
    FAIL() << "read a directory as a trace";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos)
        << e.what();
  }
}

// `prefix`, then 'x' forever with no line break.
class EndlessLine : public std::streambuf {
 public:
  explicit EndlessLine(std::string prefix)
      : prefix_(std::move(prefix)), chunk_(1 << 16, 'x') {}
  std::size_t produced() const { return produced_; }

 protected:
  int_type underflow() override {
    std::string& next = prefix_done_ ? chunk_ : prefix_;
    prefix_done_ = true;
    produced_ += next.size();
    setg(next.data(), next.data(), next.data() + next.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string prefix_, chunk_;
  bool prefix_done_ = false;
  std::size_t produced_ = 0;
};

TEST(TraceReaderReadErrorTest, ALineOverTheLimitIsAnErrorNamingItsLine) {
  // Input without line breaks (/dev/zero) must fail in bounded memory.
  std::string head = annotate("START") + constant("x1", "4");
  EndlessLine source(head);
  std::istream in(&source);
  try {
    read_trace(in, "endless.log");
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[endless.log:4] ", 0), 0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("64 MiB"), std::string::npos);
  }
  EXPECT_LE(source.produced(), kMaxTraceLineBytes + (1u << 17));
}

}  // namespace
}  // namespace dtr::trace
