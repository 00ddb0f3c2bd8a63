// Tests of the built-in model traces (dtr/models): every model writes a
// well-formed trace in the paper's format (§d.3), deterministically, with
// realistic structure; and the helpers beneath (TraceBuilder, Tape) keep
// their handle bookkeeping straight.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/models/model_registry.h"
#include "dtr/models/ops.h"
#include "dtr/models/tape.h"
#include "dtr/models/trace_builder.h"
#include "dtr/trace/trace_reader.h"
#include "dtr/trace/trace_writer.h"

namespace dtr::models {
namespace {

using json = nlohmann::json;

std::string build(std::string_view model, ModelOptions options = {}) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  build_model(model, options, writer);
  return text.str();
}

std::vector<json> parse(const std::string& trace) {
  std::vector<json> lines;
  std::istringstream in(trace);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(json::parse(line));
  }
  return lines;
}

// Aggregates of one trace, counted the way §d.4 counts them.
struct Facts {
  int ops = 0;  // CALL + MUTATE
  int mutates = 0;
  std::int64_t compute_ns = 0;
  std::int64_t constant_bytes = 0;
  std::int64_t result_bytes = 0;  // MEMORY of non-alias CALL results
  std::set<std::string> op_names;
};

Facts facts(const std::vector<json>& lines) {
  Facts f;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& l = lines[i];
    const std::string ins = l["INSTRUCTION"];
    if (ins == "CALL" || ins == "MUTATE") {
      ++f.ops;
      f.compute_ns += std::stoll(l["TIME"].get<std::string>());
      f.op_names.insert(l["NAME"].get<std::string>());
    }
    if (ins == "MUTATE") ++f.mutates;
    if (ins == "CONSTANT") {
      f.constant_bytes += std::stoll(lines[i + 1]["MEMORY"].get<std::string>());
    }
    if (ins == "CALL") {
      for (std::size_t k = 0; k < l["RESULT"].size(); ++k) {
        if (lines[i + 2 + 2 * k]["ALIAS"] == "-1") {
          f.result_bytes +=
              std::stoll(lines[i + 1 + 2 * k]["MEMORY"].get<std::string>());
        }
      }
    }
  }
  return f;
}

// ---- the registry
// ------------------------------------------------------------

TEST(ModelRegistryTest, ListsTheSevenModels) {
  const std::vector<std::string> expected{
      "chain", "resnet", "densenet", "unet", "lstm", "treelstm", "transformer"};
  EXPECT_EQ(model_names(), expected);
}

TEST(ModelRegistryTest, DescribesEveryModelOnOneLine) {
  for (const std::string& name : model_names()) {
    const std::string d = describe_model(name);
    EXPECT_EQ(d.rfind(name + ": ", 0), 0u) << d;
    EXPECT_EQ(d.find('\n'), std::string::npos) << d;
    EXPECT_NE(d.find("defaults"), std::string::npos) << d;
  }
}

TEST(ModelRegistryTest, UnknownModelThrowsAndListsKnownOnes) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  try {
    build_model("resnet50", {}, writer);
    FAIL() << "expected dtr::InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'resnet50'"), std::string::npos) << what;
    for (const std::string& name : model_names()) {
      EXPECT_NE(what.find(name), std::string::npos) << what;
    }
  }
  EXPECT_TRUE(text.str().empty());
  EXPECT_THROW(describe_model("vgg"), InvalidArgument);
}

TEST(ModelRegistryTest, Resnet32IsAnAliasOfResnet) {
  EXPECT_EQ(build("resnet32", {.batch = 2}), build("resnet", {.batch = 2}));
  EXPECT_EQ(describe_model("resnet32"), describe_model("resnet"));
}

TEST(ModelRegistryTest, BadOptionsThrow) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  EXPECT_THROW(build_model("resnet", {.batch = -1}, writer), InvalidArgument);
  EXPECT_THROW(build_model("resnet", {.depth = 33}, writer), InvalidArgument);
  EXPECT_THROW(build_model("densenet", {.depth = 50}, writer), InvalidArgument);
  EXPECT_THROW(build_model("unet", {.depth = 7}, writer), InvalidArgument);
  EXPECT_THROW(build_model("treelstm", {.depth = 27}, writer), InvalidArgument);
  EXPECT_THROW(build_model("transformer", {.width = 30}, writer),
               InvalidArgument);
  EXPECT_THROW(build_model("chain", {.depth = (1 << 21) + 1}, writer),
               InvalidArgument);
}

// ---- every model's trace
// -------------------------------------------------------

TEST(ModelBuilderTest, EveryModelBuilds) {
  for (const std::string& name : model_names()) {
    const std::vector<json> lines = parse(build(name));
    ASSERT_FALSE(lines.empty()) << name;
    EXPECT_EQ(lines.front(),
              json({{"INSTRUCTION", "ANNOTATE"}, {"ANNOTATION", "START"}}))
        << name;
    int backward = 0;
    for (const json& l : lines) {
      if (l["INSTRUCTION"] == "ANNOTATE" && l["ANNOTATION"] == "BACKWARD") {
        ++backward;
      }
    }
    EXPECT_EQ(backward, 1) << name;
    // Hundreds to a few thousand ops at the default size.
    const Facts f = facts(lines);
    EXPECT_GE(f.ops, 150) << name;
    EXPECT_LE(f.ops, 5000) << name;
  }
}

TEST(ModelBuilderTest, EveryModelIsDeterministic) {
  for (const std::string& name : model_names()) {
    EXPECT_EQ(build(name), build(name)) << name;
    EXPECT_EQ(build(name, {.seed = 7}), build(name, {.seed = 7})) << name;
  }
}

TEST(ModelBuilderTest, TreeLstmShapeDependsOnTheSeed) {
  EXPECT_NE(build("treelstm", {.seed = 1}), build("treelstm", {.seed = 2}));
  // Not just the time jitter: the trees themselves differ.
  std::set<int> op_counts;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    op_counts.insert(facts(parse(build("treelstm", {.seed = seed}))).ops);
  }
  EXPECT_GT(op_counts.size(), 1u);
}

TEST(ModelBuilderTest, EveryLineIsJsonWithAnInstruction) {
  const std::set<std::string> known{"ANNOTATE", "CONSTANT", "MEMORY",
                                    "ALIAS",    "CALL",     "MUTATE",
                                    "COPY",     "RELEASE"};
  for (const std::string& name : model_names()) {
    for (const json& l : parse(build(name))) {
      ASSERT_TRUE(l.is_object()) << name;
      ASSERT_TRUE(l.contains("INSTRUCTION")) << name << ": " << l.dump();
      EXPECT_TRUE(known.count(l["INSTRUCTION"].get<std::string>()))
          << name << ": " << l.dump();
      // Numbers are strings, except MUTATE's index list (always [0]).
      for (const char* key : {"MEMORY", "ALIAS", "TIME"}) {
        if (l.contains(key)) {
          EXPECT_TRUE(l[key].is_string()) << l.dump();
        }
      }
      if (l["INSTRUCTION"] == "MUTATE") {
        EXPECT_EQ(l["MUTATE"], json::array({0}));
      }
    }
  }
}

TEST(ModelBuilderTest, EveryCallIsFollowedByMemoryAliasPairsInResultOrder) {
  for (const std::string& name : model_names()) {
    const std::vector<json> lines = parse(build(name));
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const json& l = lines[i];
      if (l["INSTRUCTION"] == "CONSTANT") {
        ASSERT_LT(i + 1, lines.size());
        EXPECT_EQ(lines[i + 1]["INSTRUCTION"], "MEMORY") << name << ":" << i;
        EXPECT_EQ(lines[i + 1]["NAME"], l["NAME"]) << name << ":" << i;
        ++i;
        continue;
      }
      if (l["INSTRUCTION"] != "CALL") {
        // MEMORY and ALIAS appear only inside those groups.
        EXPECT_NE(l["INSTRUCTION"], "MEMORY") << name << ":" << i;
        EXPECT_NE(l["INSTRUCTION"], "ALIAS") << name << ":" << i;
        continue;
      }
      const std::size_t args = l["ARGS"].size();
      for (std::size_t k = 0; k < l["RESULT"].size(); ++k) {
        ASSERT_LT(i + 2 + 2 * k, lines.size()) << name;
        const json& memory = lines[i + 1 + 2 * k];
        const json& alias = lines[i + 2 + 2 * k];
        EXPECT_EQ(memory["INSTRUCTION"], "MEMORY") << name << ":" << i;
        EXPECT_EQ(memory["NAME"], l["RESULT"][k]) << name << ":" << i;
        EXPECT_GE(std::stoll(memory["MEMORY"].get<std::string>()), 0);
        EXPECT_EQ(alias["INSTRUCTION"], "ALIAS") << name << ":" << i;
        EXPECT_EQ(alias["NAME"], l["RESULT"][k]) << name << ":" << i;
        const int index = std::stoi(alias["ALIAS"].get<std::string>());
        EXPECT_GE(index, -1);
        EXPECT_LT(index, static_cast<int>(args));
      }
      i += 2 * l["RESULT"].size();
    }
  }
}

TEST(ModelBuilderTest, EveryNameIsDefinedBeforeUseAndDeadAfterRelease) {
  for (const std::string& name : model_names()) {
    std::set<std::string> defined, live;
    auto define = [&](const json& n, std::size_t i) {
      EXPECT_TRUE(defined.insert(n.get<std::string>()).second)
          << name << ":" << i << " redefines " << n;
      live.insert(n.get<std::string>());
    };
    auto use = [&](const json& n, std::size_t i) {
      EXPECT_TRUE(live.count(n.get<std::string>()))
          << name << ":" << i << " uses " << n
          << (defined.count(n.get<std::string>()) ? " after its RELEASE"
                                                  : " before it is defined");
    };
    const std::vector<json> lines = parse(build(name));
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const json& l = lines[i];
      const std::string ins = l["INSTRUCTION"];
      if (ins == "CONSTANT") define(l["NAME"], i);
      if (ins == "CALL" || ins == "MUTATE") {
        for (const json& a : l["ARGS"]) use(a, i);
      }
      if (ins == "CALL") {
        for (const json& r : l["RESULT"]) define(r, i);
      }
      if (ins == "COPY") {
        use(l["SRC"], i);
        define(l["DST"], i);
      }
      if (ins == "RELEASE") {
        use(l["NAME"], i);
        live.erase(l["NAME"].get<std::string>());
      }
    }
    // What is left are the trace's outputs: parameters, buffers and the
    // weight gradients, never the activations.
    EXPECT_FALSE(live.empty()) << name;
    EXPECT_LT(live.size(), defined.size() / 4) << name;
  }
}

TEST(ModelBuilderTest, EveryTraceParsesWithTheReader) {
  for (const std::string& name : model_names()) {
    const std::string text = build(name);
    const Facts f = facts(parse(text));
    std::istringstream in(text);
    const trace::Program p = trace::read_trace(in, "model:" + name);
    std::size_t constants = 0, backward = 0;
    for (const trace::ProgramOp& op : p.ops) {
      constants += op.constant ? 1 : 0;
      backward += op.backward ? 1 : 0;
    }
    EXPECT_EQ(p.ops.size() - constants, static_cast<std::size_t>(f.ops))
        << name;
    EXPECT_EQ(p.total_cost_ns, f.compute_ns) << name;
    EXPECT_GT(backward, 0u) << name;
    std::size_t pins = 0;
    for (const trace::Step& s : p.steps)
      pins += s.kind == trace::StepKind::kPin ? 1 : 0;
    EXPECT_GT(pins, 0u) << name;  // the weight gradients, at least
  }
}

TEST(ModelBuilderTest, ActivationsDominateMemory) {
  for (const std::string& name : model_names()) {
    const Facts f = facts(parse(build(name)));
    EXPECT_GT(f.result_bytes, 4 * f.constant_bytes) << name;
    EXPECT_GT(f.compute_ns, 0) << name;
  }
}

TEST(ModelBuilderTest, ModelsUseTheirCharacteristicOps) {
  const std::map<std::string, std::vector<std::string>> expected{
      {"resnet",
       {"cudnn_convolution", "cudnn_batch_norm_backward", "add",
        "constant_pad_nd", "threshold_backward"}},
      {"densenet", {"_cat", "slice", "relu_", "avg_pool2d"}},
      {"unet",
       {"max_pool2d_with_indices", "cudnn_convolution_transpose", "_cat",
        "nll_loss2d_forward", "nll_loss2d_backward"}},
      {"lstm",
       {"split", "split_backward", "sigmoid_backward", "tanh_backward", "add_",
        "addmm"}},
      {"treelstm", {"split", "sigmoid", "mm", "add_"}},
      {"transformer",
       {"bmm", "_softmax", "native_layer_norm", "_fused_dropout",
        "_masked_scale", "clone", "add_"}},
  };
  for (const auto& [model, ops] : expected) {
    const Facts f = facts(parse(build(model)));
    for (const std::string& op : ops) {
      EXPECT_TRUE(f.op_names.count(op)) << model << " lacks " << op;
    }
  }
}

TEST(ModelBuilderTest, ViewsAliasTheirInputWithItsStorageSize) {
  const std::vector<json> lines = parse(build("transformer"));
  std::map<std::string, std::int64_t> storage;  // name -> storage bytes
  int views = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& l = lines[i];
    if (l["INSTRUCTION"] == "CONSTANT") {
      storage[l["NAME"]] =
          std::stoll(lines[i + 1]["MEMORY"].get<std::string>());
    }
    if (l["INSTRUCTION"] == "COPY") storage[l["DST"]] = storage[l["SRC"]];
    if (l["INSTRUCTION"] != "CALL") continue;
    for (std::size_t k = 0; k < l["RESULT"].size(); ++k) {
      const std::int64_t bytes =
          std::stoll(lines[i + 1 + 2 * k]["MEMORY"].get<std::string>());
      const int alias =
          std::stoi(lines[i + 2 + 2 * k]["ALIAS"].get<std::string>());
      if (alias >= 0) {
        ++views;
        EXPECT_EQ(bytes, storage[l["ARGS"][alias]]) << i;
      }
      storage[l["RESULT"][k]] = bytes;
    }
  }
  EXPECT_GT(views, 100);
}

TEST(ModelBuilderTest, ChainHasUnitSizesAndCosts) {
  const int n = 50;
  const std::vector<json> lines =
      parse(build("chain", {.batch = 4, .depth = n, .width = 8}));
  const Facts f = facts(lines);
  // n forward layers, the seed gradient, n backward layers.
  EXPECT_EQ(f.ops, 2 * n + 1);
  EXPECT_EQ(f.compute_ns, (2 * n + 1) * 1000);
  EXPECT_EQ(f.result_bytes, (2 * n + 1) * 4 * 8 * 4);
  EXPECT_EQ(f.constant_bytes, 4 * 8 * 4);
}

TEST(ModelBuilderTest, OptionsScaleTheModel) {
  const Facts small = facts(parse(build("resnet", {.depth = 20})));
  const Facts deep = facts(parse(build("resnet", {.depth = 56})));
  EXPECT_GT(deep.ops, 2 * small.ops);
  const Facts wide = facts(parse(build("resnet", {.batch = 128, .depth = 20})));
  EXPECT_GT(wide.result_bytes, small.result_bytes * 3 / 2);
  const Facts longer = facts(parse(build("lstm", {.depth = 16})));
  const Facts shorter = facts(parse(build("lstm", {.depth = 8})));
  EXPECT_GT(longer.ops, shorter.ops * 3 / 2);
}

// ---- the helpers
// ---------------------------------------------------------------

TEST(TraceBuilderTest, HandlesReleaseWhenTheyDie) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  TraceBuilder b(writer);
  {
    Handle w = b.constant(64);
    const Handle* args[] = {&w};
    const TraceBuilder::Output outs[] = {{64}, {0, 0}};
    std::vector<Handle> r = b.call("split", args, outs, 10);
    EXPECT_EQ(r[1].storage_bytes(), 64);
    EXPECT_TRUE(r[1].is_alias());
    EXPECT_FALSE(r[0].is_alias());
    EXPECT_EQ(b.live_handles(), 3u);
    Handle view = std::move(r[1]);
    r[0].reset();
  }  // `view`, then `w`
  EXPECT_EQ(b.live_handles(), 0u);
  const std::vector<json> lines = parse(text.str());
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[2]["ARGS"], json({"x1"}));
  EXPECT_EQ(lines[2]["RESULT"], json({"x2", "x3"}));
  EXPECT_EQ(lines[5]["MEMORY"], "64");  // the alias logs its storage's size
  EXPECT_EQ(lines[6]["ALIAS"], "0");
  EXPECT_EQ(lines[7]["NAME"], "x2");
  EXPECT_EQ(lines[8]["NAME"], "x3");
  EXPECT_EQ(lines[9]["NAME"], "x1");
}

TEST(TraceBuilderTest, MutateNeedsTheOnlyHandleOnItsStorage) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  TraceBuilder b(writer);
  Handle x = b.constant(16);
  Handle saved = b.copy(x);
  EXPECT_FALSE(b.can_mutate(x));
  EXPECT_THROW(b.mutate("relu_", x, {}, 5), InternalError);
  saved.reset();
  EXPECT_TRUE(b.can_mutate(x));
  b.mutate("relu_", x, {}, 5);
  EXPECT_EQ(x.storage_bytes(), 16);
  const Handle* args[] = {&x};
  const TraceBuilder::Output view[] = {{0, 0}};
  std::vector<Handle> v = b.call("view", args, view, 1);
  EXPECT_FALSE(b.can_mutate(v[0]));  // a view, and x is still alive
}

TEST(TraceBuilderTest, KeptHandlesAreNeverReleased) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  TraceBuilder b(writer);
  {
    Handle g = b.constant(8);
    b.keep(g);
    EXPECT_FALSE(g.defined());
  }
  EXPECT_EQ(b.kept_handles(), 1u);
  EXPECT_EQ(text.str().find("RELEASE"), std::string::npos);
}

TEST(TraceBuilderTest, ReleasedHandleCannotBeAnArgument) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  TraceBuilder b(writer);
  Handle x = b.constant(8);
  x.reset();
  const Handle* args[] = {&x};
  const TraceBuilder::Output outs[] = {{8}};
  EXPECT_THROW(b.call("relu", args, outs, 1), InternalError);
}

TEST(TapeTest, AForwardPassOverTheLimitStopsWithAnError) {
  // The tape holds its tensors until backward: a request too big to
  // build (a Transformer of 2^21 layers) must stop early, not exhaust
  // memory.
  std::ostringstream text;
  trace::TraceWriter writer(text);
  Tape tape(writer, CostModel(1), /*max_values=*/10);
  Var w = tape.parameter({4, 4});
  Var h = tape.constant({2, 4});
  try {
    for (int i = 0; i < 100; ++i) h = relu(mm(h, w));
    FAIL() << "made 200 tensors under a limit of 10";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("passes 10 tensors"),
              std::string::npos)
        << e.what();
  }
}

TEST(TapeTest, BackwardKeepsOnlyParametersAndTheirGradients) {
  std::ostringstream text;
  trace::TraceWriter writer(text);
  {
    Tape tape(writer, CostModel(1));
    Var w = tape.parameter({8, 8});
    Var x = tape.constant({4, 8});
    // w is used twice, so its gradient is accumulated.
    Var h = mm(x, w);
    Var loss = sum(relu(mm(h, w)));
    h.reset();
    tape.backward(loss);
    EXPECT_THROW(tape.backward(x), InvalidArgument);
  }
  const std::vector<json> lines = parse(text.str());
  std::set<std::string> live;
  int accumulations = 0;
  for (const json& l : lines) {
    if (l["INSTRUCTION"] == "CONSTANT") live.insert(l["NAME"]);
    if (l["INSTRUCTION"] == "COPY") live.insert(l["DST"]);
    if (l["INSTRUCTION"] == "RELEASE") live.erase(l["NAME"]);
    if (l["INSTRUCTION"] == "CALL") {
      for (const json& r : l["RESULT"]) live.insert(r);
      if (l["NAME"] == "add") ++accumulations;
    }
    if (l["INSTRUCTION"] == "MUTATE" && l["NAME"] == "add_") ++accumulations;
  }
  EXPECT_EQ(accumulations, 1);
  EXPECT_EQ(live.size(), 2u);  // w and its gradient
  EXPECT_TRUE(live.count("x1"));
}

TEST(CostModelTest, JitterIsSeededAndBounded) {
  CostModel a(3), b(3), c(4);
  std::vector<std::int64_t> ta, tb, tc;
  for (int i = 0; i < 50; ++i) {
    ta.push_back(a.kernel_ns(8'000'000'000, 0));
    tb.push_back(b.kernel_ns(8'000'000'000, 0));
    tc.push_back(c.kernel_ns(8'000'000'000, 0));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
  for (std::int64_t t : ta) {
    // 8 µs launch + 1 ms of FLOPs, within ±5%.
    EXPECT_GE(t, 1'008'000 * 95 / 100);
    EXPECT_LE(t, 1'008'000 * 105 / 100);
  }
  EXPECT_EQ(CostModel::unit(7).kernel_ns(1 << 30, 1 << 30), 7);
}

}  // namespace
}  // namespace dtr::models
