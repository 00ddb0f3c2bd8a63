#pragma once
// Small hand-written traces for the planner tests, in the paper's format.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dtr/plan/static_graph.h"
#include "dtr/trace/trace_reader.h"

namespace dtr::plan::testing {

struct Result {
  std::string name;
  std::int64_t bytes;
  int alias = -1;  // index of the viewed argument
};

/// Builds a trace line by line: TraceText().constant("w", 8).call(...).
class TraceText {
 public:
  TraceText() {
    text_ = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"})"
            "\n";
  }
  TraceText& constant(const std::string& name, std::int64_t bytes) {
    text_ += R"({"INSTRUCTION":"CONSTANT","NAME":")" + name + "\"}\n";
    memory(name, bytes);
    return *this;
  }
  TraceText& call(const std::string& op, const std::vector<std::string>& args,
                  const std::vector<Result>& results, std::int64_t time_ns) {
    text_ += R"({"ARGS":[)" +
             quoted(args, [](const std::string& a) { return a; }) +
             R"(],"INSTRUCTION":"CALL","NAME":")" + op + R"(","RESULT":[)" +
             quoted(results, [](const Result& r) { return r.name; }) +
             R"(],"TIME":")" + std::to_string(time_ns) + "\"}\n";
    for (const Result& r : results) {
      memory(r.name, r.bytes);
      text_ += R"({"ALIAS":")" + std::to_string(r.alias) +
               R"(","INSTRUCTION":"ALIAS","NAME":")" + r.name + "\"}\n";
    }
    return *this;
  }
  TraceText& backward() {
    text_ += R"({"ANNOTATION":"BACKWARD","INSTRUCTION":"ANNOTATE"})"
             "\n";
    return *this;
  }
  TraceText& release(const std::string& name) {
    text_ += R"({"INSTRUCTION":"RELEASE","NAME":")" + name + "\"}\n";
    return *this;
  }
  trace::Program program() const {
    std::istringstream in(text_);
    return trace::read_trace(in, "test.log");
  }
  StaticGraph graph() const { return build_static_graph(program()); }

 private:
  void memory(const std::string& name, std::int64_t bytes) {
    text_ += R"({"INSTRUCTION":"MEMORY","MEMORY":")" + std::to_string(bytes) +
             R"(","NAME":")" + name + "\"}\n";
  }
  template <typename T, typename F>
  static std::string quoted(const std::vector<T>& items, F name) {
    std::string out;
    for (const T& item : items) {
      out += (out.empty() ? "\"" : ",\"") + name(item) + "\"";
    }
    return out;
  }
  std::string text_;
};

/// A training-style graph with a skip connection: x -> a -> b -> c, c
/// also reads a; backward nodes read the forward values. Every tensor is
/// `bytes`, every op `cost` ns; the weight gradient-like output `gc` stays.
inline TraceText skip_training_trace(std::int64_t bytes = 100,
                                     std::int64_t cost = 10) {
  TraceText t;
  t.constant("x", bytes)
      .call("f1", {"x"}, {{"a", bytes}}, cost)
      .call("f2", {"a"}, {{"b", bytes}}, cost)
      .call("f3", {"a", "b"}, {{"c", bytes}}, cost)
      .backward()
      .call("g3", {"c", "b"}, {{"gc", bytes}}, cost)
      .call("g2", {"gc", "a"}, {{"gb", bytes}}, cost)
      .call("g1", {"gb", "x"}, {{"ga", bytes}}, cost);
  for (const char* v : {"a", "b", "c", "gc", "gb"}) t.release(v);
  return t;
}

}  // namespace dtr::plan::testing
