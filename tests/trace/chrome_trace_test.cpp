// The Chrome trace writer (dtr/trace/chrome_trace.h): every event kind
// parses back as the Trace Event Format says, times are exact, names are
// escaped, and a file that cannot be written is an error naming it.
#include "dtr/trace/chrome_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "dtr/core/error.h"
#include "support/chrome_trace_json.h"
#include "support/temp_dir.h"

namespace dtr::trace {
namespace {

using dtr::testing::events;
using dtr::testing::read_profile;
using dtr::testing::TempDir;

TEST(ChromeTraceWriterTest, WritesEveryEventKind) {
  TempDir dir;
  const std::string path = (dir / "p.json").string();
  ChromeTraceWriter w(path);
  w.process_name(1, "dtr sim");
  w.thread_name(1, 2, "runtime");
  w.complete("relu", "op", 1234567, 1001, 1, 2,
             {{"op", 3}, {"score", 0.5}, {"what", "x"}});
  w.instant("evict", "eviction", 7, 1, 2, {{"bytes", std::int64_t{1} << 40}});
  w.counter("dtr bytes", 9000, 1, {{"dtr_bytes", 42}});
  w.close();
  const nlohmann::json j = read_profile(path);
  ASSERT_TRUE(j["traceEvents"].is_array());
  ASSERT_EQ(j["traceEvents"].size(), 5u);

  const auto meta = events(j, "M");
  ASSERT_EQ(meta.size(), 2u);
  EXPECT_EQ(meta[0]["name"], "process_name");
  EXPECT_EQ(meta[0]["args"]["name"], "dtr sim");
  EXPECT_EQ(meta[1]["name"], "thread_name");
  EXPECT_EQ(meta[1]["tid"], 2);

  const auto x = events(j, "X");
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0]["name"], "relu");
  EXPECT_EQ(x[0]["cat"], "op");
  EXPECT_DOUBLE_EQ(x[0]["ts"].get<double>(), 1234.567);  // microseconds
  EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 1.001);
  EXPECT_EQ(x[0]["pid"], 1);
  EXPECT_EQ(x[0]["tid"], 2);
  EXPECT_EQ(x[0]["args"]["op"], 3);
  EXPECT_DOUBLE_EQ(x[0]["args"]["score"].get<double>(), 0.5);
  EXPECT_EQ(x[0]["args"]["what"], "x");

  const auto i = events(j, "i");
  ASSERT_EQ(i.size(), 1u);
  EXPECT_EQ(i[0]["s"], "t");
  EXPECT_DOUBLE_EQ(i[0]["ts"].get<double>(), 0.007);
  EXPECT_EQ(i[0]["args"]["bytes"].get<std::int64_t>(), std::int64_t{1} << 40);

  const auto c = events(j, "C");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["name"], "dtr bytes");
  EXPECT_EQ(c[0]["args"]["dtr_bytes"], 42);
}

TEST(ChromeTraceWriterTest, EscapesNamesAndWritesNonFiniteRealsAsStrings) {
  TempDir dir;
  const std::string path = (dir / "p.json").string();
  const std::string odd = "a\"b\\c\nd\te\x01";
  ChromeTraceWriter w(path);
  w.complete(odd, "op", 0, 0, 1, 1,
             {{"inf", std::numeric_limits<double>::infinity()},
              {"nan", std::numeric_limits<double>::quiet_NaN()}});
  w.close();
  const nlohmann::json j = read_profile(path);
  ASSERT_EQ(j["traceEvents"].size(), 1u);
  EXPECT_EQ(j["traceEvents"][0]["name"], odd);
  EXPECT_EQ(j["traceEvents"][0]["args"]["inf"], "inf");
  EXPECT_EQ(j["traceEvents"][0]["args"]["nan"], "nan");
}

TEST(ChromeTraceWriterTest, AnEmptyProfileIsValid) {
  TempDir dir;
  const std::string path = (dir / "p.json").string();
  { ChromeTraceWriter w(path); }  // closed by the destructor
  EXPECT_TRUE(read_profile(path)["traceEvents"].empty());
}

TEST(ChromeTraceWriterTest, AnUnwritablePathIsAnErrorNamingIt) {
  TempDir dir;
  const std::string path = (dir / "no-such-dir" / "p.json").string();
  try {
    ChromeTraceWriter w(path);
    FAIL() << "opened " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(ChromeTraceWriterTest, AFailedWriteIsAnErrorAtClose) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  ChromeTraceWriter w("/dev/full");
  for (int k = 0; k < 1000; ++k) w.counter("c", k, 1, {{"v", k}});
  try {
    w.close();
    FAIL() << "a write to /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dtr::trace
