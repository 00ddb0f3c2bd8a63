// Tests of where programs come from (dtr/sim/program_source.h): trace files,
// built-in models with their options, manifests, and the errors for each
// kind of bad spec, which must name the spec and the bad part.
#include "dtr/sim/program_source.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/models/model_registry.h"
#include "dtr/trace/trace_reader.h"
#include "support/small_traces.h"
#include "support/temp_dir.h"

namespace dtr::sim {
namespace {

using dtr::testing::TempDir;

// Expects `fn` to throw E whose message holds every fragment.
template <typename E, typename F>
void expect_error(F&& fn, const std::vector<std::string>& fragments) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const auto& f : fragments) {
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "'" << f << "' not in: " << e.what();
    }
  }
}

// ---- load_program: trace files

TEST(ProgramSourceTest, ATraceFileIsNamedByItsStem) {
  TempDir dir;
  const std::string path =
      dir.write("trace-c.v1.log", small_traces::trace_c_text());
  NamedProgram np = load_program(path);
  EXPECT_EQ(np.name, "trace-c.v1");
  // Trace C (small_traces.h): a constant and four calls, 40 ns in all.
  EXPECT_EQ(np.program.trace_ops(), 5u);
  EXPECT_EQ(np.program.constant_count, 1u);
  EXPECT_EQ(np.program.total_cost_ns, 40);
  EXPECT_EQ(np.program.source, path);
}

TEST(ProgramSourceTest, AMissingTraceFileIsATraceErrorNamingThePath) {
  TempDir dir;
  const std::string path = (dir / "nope.log").string();
  expect_error<trace::TraceError>([&] { load_program(path); },
                                  {"[" + path + "]", "cannot open"});
}

TEST(ProgramSourceTest, AMalformedTraceFileNamesTheFileAndLine) {
  TempDir dir;
  const std::string path = dir.write(
      "bad.log", small_traces::trace_a_text() + "{\"INSTRUCTION\": \"FOO\"}\n");
  // Trace A has 13 lines: a constant and its MEMORY line, three calls
  // with their MEMORY and ALIAS lines, two releases. The bad one is 14.
  expect_error<trace::TraceError>([&] { load_program(path); },
                                  {"[" + path + ":14]", "'FOO'"});
}

// ---- load_program: built-in models

TEST(ProgramSourceTest, EveryShippedModelLoadsUnderItsName) {
  const std::vector<std::string> shipped = {
      "chain", "resnet", "densenet", "unet", "lstm", "treelstm", "transformer"};
  ASSERT_EQ(models::model_names(), shipped);
  for (const auto& name : shipped) {
    SCOPED_TRACE(name);
    NamedProgram np = load_program("model:" + name);
    EXPECT_EQ(np.name, name);
    EXPECT_GT(np.program.trace_ops(), 0u);
    EXPECT_GT(np.program.total_cost_ns, 0);
  }
}

TEST(ProgramSourceTest, ModelOptionsReachTheBuilder) {
  // The chain: n forward layers, the seed gradient and n backward layers,
  // 1000 ns each (ModelBuilderTest.ChainHasUnitSizesAndCosts).
  for (int depth : {3, 10}) {
    NamedProgram np =
        load_program("model:chain?depth=" + std::to_string(depth));
    EXPECT_EQ(np.name, "chain?depth=" + std::to_string(depth));
    EXPECT_EQ(np.program.total_cost_ns, (2 * depth + 1) * 1000);
  }
  // Every key is read: batch and width set the one constant's size
  // (batch x width floats); the same spec twice is the same program.
  NamedProgram np = load_program("model:chain?batch=3&width=5&depth=2");
  EXPECT_EQ(np.name, "chain?batch=3&width=5&depth=2");
  ASSERT_EQ(np.program.constant_count, 1u);
  for (const auto& op : np.program.ops) {
    if (op.constant) {
      EXPECT_EQ(op.outputs.at(0).bytes, 3 * 5 * 4);
    }
  }
  const auto shape = [](const std::string& spec) {
    return load_program(spec).program.trace_ops();
  };
  EXPECT_EQ(shape("model:treelstm?seed=3"), shape("model:treelstm?seed=3"));
  bool seed_matters = false;
  for (int seed = 4; seed < 8 && !seed_matters; ++seed) {
    seed_matters = shape("model:treelstm?seed=" + std::to_string(seed)) !=
                   shape("model:treelstm?seed=3");
  }
  EXPECT_TRUE(seed_matters) << "the seed did not reach the tree builder";
}

TEST(ProgramSourceTest, AnUnknownModelNamesItAndListsTheKnownOnes) {
  expect_error<InvalidArgument>([] { load_program("model:vgg16"); },
                                {"'vgg16'", "chain", "transformer"});
}

TEST(ProgramSourceTest, BadModelOptionsNameTheSpecAndTheBadPart) {
  expect_error<InvalidArgument>([] { load_program("model:chain?depth=abc"); },
                                {"[model:chain?depth=abc]", "depth", "'abc'"});
  expect_error<InvalidArgument>([] { load_program("model:chain?depth=-1"); },
                                {"'-1'"});
  expect_error<InvalidArgument>([] { load_program("model:chain?depth=4x"); },
                                {"'4x'"});
  // Past 2^30.
  expect_error<InvalidArgument>(
      [] { load_program("model:chain?depth=1073741825"); }, {"'1073741825'"});
  expect_error<InvalidArgument>([] { load_program("model:chain?depth"); },
                                {"key=value", "'depth'"});
  expect_error<InvalidArgument>(
      [] { load_program("model:chain?colour=2"); },
      {"unknown option 'colour'", "batch", "depth", "width", "seed"});
  // In range for the parser, out of range for the model.
  expect_error<InvalidArgument>([] { load_program("model:resnet?depth=33"); },
                                {"resnet"});
}

// ---- expand_program_specs

TEST(ProgramSourceTest, NoArgumentsMeanEveryBuiltInModel) {
  std::vector<std::string> expected;
  for (const char* m : {"chain", "resnet", "densenet", "unet", "lstm",
                        "treelstm", "transformer"}) {
    expected.push_back(std::string("model:") + m);
  }
  EXPECT_EQ(expand_program_specs({}), expected);
}

TEST(ProgramSourceTest, FilesAndModelsPassThroughUnchanged) {
  // Not opened here: a missing file is load_program's error.
  const std::vector<std::string> args = {"a.log", "dir/b", "model:lstm?depth=4",
                                         "does/not/exist.log"};
  EXPECT_EQ(expand_program_specs(args), args);
}

TEST(ProgramSourceTest, AManifestListsLogsRelativeToItself) {
  TempDir dir;
  const std::string manifest =
      dir.write("m.json",
                R"({"models": [{"name": "x", "log": "traces/x.log"},
                     {"log": "model:chain?depth=2"},
                     {"log": "y.log", "extra": 1}]})");
  const std::vector<std::string> specs =
      expand_program_specs({"first.log", manifest, "model:unet"});
  const std::vector<std::string> expected = {
      "first.log", (dir / "traces/x.log").string(), "model:chain?depth=2",
      (dir / "y.log").string(), "model:unet"};
  EXPECT_EQ(specs, expected);
}

TEST(ProgramSourceTest, BadManifestsNameTheManifest) {
  TempDir dir;
  const std::string missing = (dir / "missing.json").string();
  expect_error<InvalidArgument>([&] { expand_program_specs({missing}); },
                                {"[" + missing + "]", "cannot open"});
  for (const char* text :
       {"not json", "[1, 2]", "{}", R"({"models": {"log": "a.log"}})"}) {
    SCOPED_TRACE(text);
    const std::string path = dir.write("bad.json", text);
    expect_error<InvalidArgument>([&] { expand_program_specs({path}); },
                                  {"[" + path + "]", "\"models\""});
  }
  for (const char* text :
       {R"({"models": [{"name": "a"}]})", R"({"models": [{"log": 3}]})",
        R"({"models": ["a.log"]})"}) {
    SCOPED_TRACE(text);
    const std::string path = dir.write("entry.json", text);
    expect_error<InvalidArgument>([&] { expand_program_specs({path}); },
                                  {"[" + path + "]", "\"log\""});
  }
}

}  // namespace
}  // namespace dtr::sim
