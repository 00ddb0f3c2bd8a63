#pragma once
// Reading back a profile (dtr/trace/chrome_trace.h) in tests: the JSON is
// parsed as a viewer would, and spans are checked for nesting on exact
// nanosecond times (the writer prints microseconds with 3 decimals).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dtr::testing {

/// Parses the profile at `path`; fails the test if it is not JSON.
inline nlohmann::json read_profile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not valid JSON";
  return j;
}

inline std::int64_t to_ns(const nlohmann::json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

struct Span {
  std::string name, category;
  std::int64_t begin_ns = 0, end_ns = 0;
  nlohmann::json args;
  bool contains(const Span& s) const {
    return begin_ns <= s.begin_ns && s.end_ns <= end_ns;
  }
};

/// The complete ("X") events of `category` ("" for all).
inline std::vector<Span> spans(const nlohmann::json& profile,
                               const std::string& category = "") {
  std::vector<Span> out;
  for (const auto& e : profile["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (!category.empty() && e["cat"] != category) continue;
    const std::int64_t ts = to_ns(e["ts"]);
    out.push_back({e["name"], e["cat"], ts, ts + to_ns(e["dur"]),
                   e.value("args", nlohmann::json::object())});
  }
  return out;
}

/// The events of phase `ph` ("i", "C", "M") named `name` ("" for all).
inline std::vector<nlohmann::json> events(const nlohmann::json& profile,
                                          const std::string& ph,
                                          const std::string& name = "") {
  std::vector<nlohmann::json> out;
  for (const auto& e : profile["traceEvents"]) {
    if (e["ph"] == ph && (name.empty() || e["name"] == name)) out.push_back(e);
  }
  return out;
}

}  // namespace dtr::testing
