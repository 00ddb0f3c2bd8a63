#pragma once
/// Private to dtr/trace: reading the fields of one JSON line of a trace,
/// with errors that name the file and line ("[file:line] missing field
/// NAME"). Every failure throws TraceError.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dtr/trace/trace_reader.h"

namespace dtr::trace::detail {

using json = nlohmann::json;

/// Where a field was read: the trace's name and the 1-based line.
struct LineRef {
  const std::string& source;
  std::size_t line;
};

/// Throws TraceError("[source:line] what").
[[noreturn]] void fail_at(const LineRef& at, const std::string& what);

/// `text` as a JSON object; throws naming an excerpt of the text otherwise.
json json_parse_line(const std::string& text, const LineRef& at);

/// The string field `key`, or "" when it is missing or not a string (for
/// peeking; json_string reports those as errors).
std::string json_peek_string(const json& j, const char* key);

/// The string field `key`; throws if it is missing or not a string.
std::string json_string(const json& j, const char* key, const LineRef& at);

/// The integer field `key`: a string of digits as in the paper's logs, or a
/// plain JSON integer; throws if it is missing, not an integer or beyond
/// int64.
std::int64_t json_int(const json& j, const char* key, const LineRef& at);

/// The list of names (strings) in field `key`.
std::vector<std::string> json_names(const json& j, const char* key,
                                    const LineRef& at);

}  // namespace dtr::trace::detail
