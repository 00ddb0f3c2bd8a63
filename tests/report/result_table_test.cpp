// Tests of the result table (dtr/report/result_table.h): the CSV header, rows
// and JSON objects use the same names, carry every field exactly, quote
// trace names the way RFC 4180 needs, and read back to the result written.
// Expected strings are written out by hand, not produced by the code.
#include "dtr/report/result_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace dtr::report {
namespace {

// Splits one CSV record (RFC 4180: a quoted field may hold commas, quotes
// doubled, and line breaks). Fails the test on a malformed record.
std::vector<std::string> parse_csv_record(const std::string& text) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
        if (i + 1 < text.size() && text[i + 1] != ',') {
          ADD_FAILURE() << "text after a closing quote in: " << text;
        }
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '"' || c == '\n' || c == '\r') {
      ADD_FAILURE() << "unquoted '" << c << "' in: " << text;
    } else {
      fields.back() += c;
    }
  }
  if (quoted) ADD_FAILURE() << "unterminated quote in: " << text;
  return fields;
}

// A result whose every field has a value no other field has, with the
// 64-bit fields past 32 bits and at their limits.
sim::SimResult distinct_result() {
  sim::SimResult r;
  r.status = sim::SimStatus::kThrash;
  r.heuristic = "dtr-eq";
  r.policy = DeallocPolicy::kBanish;
  r.budget_ratio = 0.3;
  r.budget_bytes = 3000000000123;
  r.baseline.peak_bytes = std::numeric_limits<std::int64_t>::max();
  r.baseline.compute_ns = 7;
  r.baseline.constant_bytes = 11;
  r.baseline.bottleneck_bytes = 13;
  r.model_compute_ns = 17;
  r.remat_compute_ns = 19;
  r.overhead = 1.25;
  r.peak_bytes = 23;
  r.evictions = 29;
  r.eager_evictions = 31;
  r.banishments = 37;
  r.remats = 41;
  r.metadata_accesses = std::numeric_limits<std::uint64_t>::max();
  r.trace_ops = 43;
  r.sim_wall_ns = 47;
  r.chosen = "msps";
  r.allocator = sim::AllocatorKind::kCaching;
  r.reserved_peak_bytes = 53;
  r.fragmentation = 0.5;
  r.allocator_ooms = 59;
  r.first_allocator_oom_ns = 61;
  r.message = "gave up, at \"limit\"\nsecond line";
  return r;
}

// distinct_result() as the text of each column, written by hand.
const std::map<std::string, std::string> kDistinctColumns = {
    {"trace", "resnet"},
    {"heuristic", "dtr-eq"},
    {"policy", "banish"},
    {"budget_ratio", "0.3"},
    {"budget_bytes", "3000000000123"},
    {"baseline_peak_bytes", "9223372036854775807"},
    {"baseline_compute_ns", "7"},
    {"baseline_constant_bytes", "11"},
    {"baseline_bottleneck_bytes", "13"},
    {"model_compute_ns", "17"},
    {"remat_compute_ns", "19"},
    {"overhead", "1.25"},
    {"peak_bytes", "23"},
    {"evictions", "29"},
    {"eager_evictions", "31"},
    {"banishments", "37"},
    {"remats", "41"},
    {"metadata_accesses", "18446744073709551615"},
    {"status", "thrash"},
    {"trace_ops", "43"},
    {"sim_wall_ns", "47"},
    {"chosen", "msps"},
    {"allocator", "caching"},
    {"live_peak_bytes", "23"},  // peak_bytes again, named beside reserved
    {"reserved_peak_bytes", "53"},
    {"fragmentation", "0.5"},
    {"allocator_ooms", "59"},
    {"first_allocator_oom_ns", "61"},
};

std::map<std::string, std::string> row_by_column(const std::string& row) {
  const std::vector<std::string> fields = parse_csv_record(row);
  const std::vector<std::string>& columns = result_columns();
  EXPECT_EQ(fields.size(), columns.size()) << row;
  std::map<std::string, std::string> m;
  for (std::size_t i = 0; i < fields.size() && i < columns.size(); ++i) {
    m[columns[i]] = fields[i];
  }
  return m;
}

TEST(ResultTableTest, ColumnsAreUniqueAndTheHeaderJoinsThem) {
  const std::vector<std::string>& columns = result_columns();
  EXPECT_EQ(std::set<std::string>(columns.begin(), columns.end()).size(),
            columns.size());
  std::set<std::string> expected;
  for (const auto& [name, text] : kDistinctColumns) expected.insert(name);
  EXPECT_EQ(std::set<std::string>(columns.begin(), columns.end()), expected);
  EXPECT_EQ(columns.front(), "trace");
  // A table with no results is this one line.
  EXPECT_EQ(parse_csv_record(result_csv_header()), columns);
}

TEST(ResultTableTest, CsvRowCarriesEveryFieldUnderItsColumn) {
  EXPECT_EQ(row_by_column(result_to_csv_row("resnet", distinct_result())),
            kDistinctColumns);
}

TEST(ResultTableTest, JsonHasTheSameKeysAndValues) {
  const nlohmann::json j = result_to_json("resnet", distinct_result());
  ASSERT_TRUE(j.is_object());
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  std::set<std::string> expected{"message"};
  for (const auto& c : result_columns()) expected.insert(c);
  EXPECT_EQ(keys, expected);
  for (const auto& [column, text] : kDistinctColumns) {
    SCOPED_TRACE(column);
    const nlohmann::json& v = j.at(column);
    // Numbers stay numbers (not strings), and print as the CSV does.
    if (v.is_string()) {
      EXPECT_EQ(v.get<std::string>(), text);
    } else {
      ASSERT_TRUE(v.is_number());
      EXPECT_EQ(v.dump(), text);
    }
  }
  EXPECT_EQ(j.at("message"), "gave up, at \"limit\"\nsecond line");
  EXPECT_EQ(j.at("metadata_accesses").get<std::uint64_t>(),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(ResultTableTest, JsonSurvivesADumpAndParse) {
  const nlohmann::json j = result_to_json("tab\there \"q\"", distinct_result());
  const nlohmann::json back = nlohmann::json::parse(j.dump());
  EXPECT_EQ(back, j);
  EXPECT_EQ(back.at("trace"), "tab\there \"q\"");
  EXPECT_EQ(back.at("budget_ratio").get<double>(), 0.3);
  EXPECT_EQ(back.at("overhead").get<double>(), 1.25);
}

TEST(ResultTableTest, SuccessfulRunsHaveNoMessageKey) {
  sim::SimResult ok = distinct_result();
  ok.status = sim::SimStatus::kOk;
  ok.message.clear();
  const nlohmann::json j = result_to_json("resnet", ok);
  EXPECT_FALSE(j.contains("message")) << j.dump();
  EXPECT_EQ(j.at("status"), "ok");
}

TEST(ResultTableTest, OomCellKeepsItsShapeAndLeavesTheMessageToJson) {
  sim::SimResult oom;  // what a run out of memory at once reports
  oom.status = sim::SimStatus::kOom;
  oom.heuristic = "dtr";
  oom.budget_ratio = 0.1;
  oom.budget_bytes = 60;
  oom.message = "out of memory: needed 100, budget 60";
  const auto row = row_by_column(result_to_csv_row("a", oom));
  EXPECT_EQ(row.at("status"), "oom");
  EXPECT_EQ(row.at("overhead"), "0");
  EXPECT_EQ(row.at("peak_bytes"), "0");
  EXPECT_EQ(row.at("budget_bytes"), "60");
  EXPECT_EQ(row.at("policy"), "eager");
  const nlohmann::json j = result_to_json("a", oom);
  EXPECT_EQ(j.at("status"), "oom");
  EXPECT_EQ(j.at("message"), "out of memory: needed 100, budget 60");
}

TEST(ResultTableTest, TraceNamesAreQuotedOnlyWhenTheyMustBe) {
  const sim::SimResult r = distinct_result();
  // Plain names are written as they are; an empty one is an empty field.
  EXPECT_EQ(
      result_to_csv_row("resnet-32_b8.v2", r).rfind("resnet-32_b8.v2,", 0), 0u);
  EXPECT_EQ(result_to_csv_row("", r).rfind(",dtr-eq,", 0), 0u);
  // A comma or a quote needs quotes, with inner quotes doubled.
  EXPECT_EQ(result_to_csv_row("a,b", r).rfind("\"a,b\",dtr-eq,", 0), 0u);
  EXPECT_EQ(result_to_csv_row("say \"hi\"", r).rfind("\"say \"\"hi\"\"\",", 0),
            0u);
}

TEST(ResultTableTest, EveryTraceNameReadsBackFromTheCsv) {
  for (const std::string name :
       {"", "plain", "a,b", "\"", "\"\"", "say \"hi\", then go", ",", "x\"",
        "line\nbreak", "carriage\rreturn", "crlf\r\n"}) {
    SCOPED_TRACE(nlohmann::json(name).dump());
    const auto row = row_by_column(result_to_csv_row(name, distinct_result()));
    ASSERT_EQ(row.size(), result_columns().size());
    EXPECT_EQ(row.at("trace"), name);
    EXPECT_EQ(row.at("sim_wall_ns"), "47");  // the row did not shift
  }
}

}  // namespace
}  // namespace dtr::report
