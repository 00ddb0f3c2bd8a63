// `--allocator` of `dtr sim` and `dtr sweep`: the reserved figures in the
// JSON and the CSV, the perfect default, and the error for a bad name.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_cli.h"
#include "support/temp_dir.h"

namespace dtr {
namespace {

using nlohmann::json;
using testing::run_cli;

json sim_json(const testing::TempDir& dir, const std::string& allocator) {
  const testing::CliRun r = run_cli(
      dir.path(), "sim model:resnet --budget-ratio 0.5 --json" + allocator);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

TEST(AllocatorCliTest, SimJsonReportsLiveAndReservedPeaks) {
  testing::TempDir dir;
  const json perfect = sim_json(dir, "");
  ASSERT_TRUE(perfect.is_object());
  EXPECT_EQ(perfect["allocator"], "perfect");
  EXPECT_EQ(perfect["live_peak_bytes"], perfect["peak_bytes"]);
  EXPECT_EQ(perfect["reserved_peak_bytes"], perfect["peak_bytes"]);
  const json caching = sim_json(dir, " --allocator caching");
  ASSERT_TRUE(caching.is_object());
  EXPECT_EQ(caching["allocator"], "caching");
  EXPECT_EQ(caching["live_peak_bytes"], perfect["live_peak_bytes"]);
  EXPECT_EQ(caching["overhead"], perfect["overhead"]);
  EXPECT_GE(caching["reserved_peak_bytes"].get<std::int64_t>(),
            caching["live_peak_bytes"].get<std::int64_t>());
}

TEST(AllocatorCliTest, TheArenaReservesExactlyTheBudget) {
  testing::TempDir dir;
  const json arena = sim_json(dir, " --allocator arena");
  ASSERT_TRUE(arena.is_object());
  EXPECT_EQ(arena["allocator"], "arena");
  EXPECT_EQ(arena["reserved_peak_bytes"], arena["budget_bytes"]);
  EXPECT_EQ(arena["allocator_ooms"], 0);
  EXPECT_LE(arena["live_peak_bytes"].get<std::int64_t>(),
            arena["budget_bytes"].get<std::int64_t>());
}

TEST(AllocatorCliTest, SimTextNamesTheReservedPeak) {
  testing::TempDir dir;
  const testing::CliRun r = run_cli(
      dir.path(), "sim model:chain --budget-ratio 0.6 --allocator best-fit");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("allocator best-fit: reserved peak "), std::string::npos)
      << r.out;
}

TEST(AllocatorCliTest, AnUnknownModelIsAnErrorNamingTheOption) {
  testing::TempDir dir;
  for (const char* cmd : {"sim model:chain --budget-ratio 0.5",
                          "sweep model:chain --ratios 0.5 --out out"}) {
    const testing::CliRun r =
        run_cli(dir.path(), std::string(cmd) + " --allocator buddy");
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_EQ(r.err.rfind("dtr: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("--allocator"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'buddy'"), std::string::npos) << r.err;
  }
}

TEST(AllocatorCliTest, SweepWritesTheReservedColumns) {
  testing::TempDir dir;
  const testing::CliRun r =
      run_cli(dir.path(),
              "sweep model:chain --ratios 1.0,0.5 --heuristics dtr "
              "--allocator caching --no-plots --quiet --out out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("within an allocator of the budget"), std::string::npos)
      << r.out;
  std::ifstream csv(dir.path() / "out" / "results.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find("allocator,live_peak_bytes,reserved_peak_bytes"),
            std::string::npos)
      << header;
  std::string row;
  std::getline(csv, row);
  EXPECT_NE(row.find(",caching,"), std::string::npos) << row;
}

}  // namespace
}  // namespace dtr
