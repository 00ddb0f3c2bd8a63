#include <charconv>
#include <limits>

#include "dtr/trace/json_fields_impl.h"

namespace dtr::trace::detail {

namespace {

// The start of `text`, printable characters only (it may be binary).
std::string excerpt(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < 60; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    out += (c >= 32 && c < 127) ? static_cast<char>(c) : '?';
  }
  return "'" + out + (text.size() > 60 ? "...'" : "'");
}

const json& field(const json& j, const char* key, const LineRef& at) {
  auto it = j.find(key);
  if (it == j.end()) fail_at(at, std::string("missing field ") + key);
  return *it;
}

}  // namespace

void fail_at(const LineRef& at, const std::string& what) {
  throw TraceError("[" + at.source + ":" + std::to_string(at.line) + "] " +
                   what);
}

json json_parse_line(const std::string& text, const LineRef& at) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail_at(at, "not valid JSON: " + excerpt(text));
  if (!j.is_object()) fail_at(at, "expected a JSON object");
  return j;
}

std::string json_peek_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string json_string(const json& j, const char* key, const LineRef& at) {
  const json& v = field(j, key, at);
  if (!v.is_string()) {
    fail_at(at, std::string("field ") + key + " must be a string");
  }
  return v.get<std::string>();
}

std::int64_t json_int(const json& j, const char* key, const LineRef& at) {
  const json& v = field(j, key, at);
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() >
          std::uint64_t(std::numeric_limits<std::int64_t>::max())) {
    fail_at(at, std::string("field ") + key + " = " + v.dump() +
                    " is out of range (above 2^63 - 1)");
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) {
      return n;
    }
    if (ec == std::errc::result_out_of_range) {
      fail_at(at, std::string("field ") + key + " = " + v.dump() +
                      " is out of range (beyond +-2^63)");
    }
  }
  fail_at(at,
          std::string("field ") + key + " must be an integer, got " + v.dump());
}

std::vector<std::string> json_names(const json& j, const char* key,
                                    const LineRef& at) {
  const json& v = field(j, key, at);
  if (!v.is_array()) {
    fail_at(at, std::string("field ") + key + " must be a list of names");
  }
  std::vector<std::string> out;
  for (const auto& x : v) {
    if (!x.is_string()) {
      fail_at(at, std::string("field ") + key + " must hold only strings");
    }
    out.push_back(x.get<std::string>());
  }
  return out;
}

}  // namespace dtr::trace::detail
