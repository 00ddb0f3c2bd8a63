#include "dtr/trace/trace_writer.h"

#include <nlohmann/json.hpp>

namespace dtr::trace {

namespace {
using json = nlohmann::json;  // std::map-backed: keys come out sorted

json names(std::span<const std::string> xs) {
  json a = json::array();
  for (const auto& x : xs) a.push_back(x);
  return a;
}
}  // namespace

void TraceWriter::emit(const std::string& line) {
  out_ << line << '\n';
  ++lines_;
}

void TraceWriter::annotate(std::string_view annotation) {
  emit(json{{"INSTRUCTION", "ANNOTATE"}, {"ANNOTATION", annotation}}.dump());
}

void TraceWriter::constant(std::string_view name, std::int64_t bytes) {
  emit(json{{"INSTRUCTION", "CONSTANT"}, {"NAME", name}}.dump());
  emit(json{{"INSTRUCTION", "MEMORY"},
            {"NAME", name},
            {"MEMORY", std::to_string(bytes)}}
           .dump());
}

void TraceWriter::call(std::string_view op, std::span<const std::string> args,
                       std::span<const Result> results, std::int64_t time_ns,
                       std::int64_t workspace_bytes) {
  json result = json::array();
  for (const auto& r : results) result.push_back(r.name);
  json line{{"INSTRUCTION", "CALL"},
            {"NAME", op},
            {"ARGS", names(args)},
            {"RESULT", result},
            {"TIME", std::to_string(time_ns)}};
  if (workspace_bytes > 0) line["WORKSPACE"] = std::to_string(workspace_bytes);
  emit(line.dump());
  for (const auto& r : results) {
    emit(json{{"INSTRUCTION", "MEMORY"},
              {"NAME", r.name},
              {"MEMORY", std::to_string(r.bytes)}}
             .dump());
    emit(json{{"INSTRUCTION", "ALIAS"},
              {"NAME", r.name},
              {"ALIAS", std::to_string(r.alias)}}
             .dump());
  }
}

void TraceWriter::mutate(std::string_view op, std::span<const std::string> args,
                         std::span<const int> mutated, std::int64_t time_ns) {
  json m = json::array();
  for (int i : mutated) m.push_back(i);
  emit(json{{"INSTRUCTION", "MUTATE"},
            {"NAME", op},
            {"ARGS", names(args)},
            {"MUTATE", m},
            {"TIME", std::to_string(time_ns)}}
           .dump());
}

void TraceWriter::copy(std::string_view dst, std::string_view src) {
  emit(json{{"INSTRUCTION", "COPY"}, {"DST", dst}, {"SRC", src}}.dump());
}

void TraceWriter::copy_from(std::string_view dst, std::string_view src) {
  emit(json{{"INSTRUCTION", "COPY_FROM"}, {"DST", dst}, {"SRC", src}}.dump());
}

void TraceWriter::pin(std::string_view name) {
  emit(json{{"INSTRUCTION", "PIN"}, {"NAME", name}}.dump());
}

void TraceWriter::unpin(std::string_view name) {
  emit(json{{"INSTRUCTION", "UNPIN"}, {"NAME", name}}.dump());
}

void TraceWriter::release(std::string_view name) {
  emit(json{{"INSTRUCTION", "RELEASE"}, {"NAME", name}}.dump());
}

}  // namespace dtr::trace
