// Hostile input and hostile environments for the `dtr` command line: file
// names that would be commands, inputs that cannot be read or never end,
// outputs that must not be torn or overwrite their inputs, and limits on
// file descriptors. Each run is bounded by `timeout`, so a hang fails the
// test (exit 124) instead of stalling the suite.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_cli.h"
#include "tests/support/temp_dir.h"

namespace dtr::cli {
namespace {

namespace fs = std::filesystem;
using dtr::testing::quote;
using dtr::testing::slurp;

constexpr int kTimedOut = 124;

bool have_gnuplot() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class ReliabilityCliTest : public ::testing::Test {
 protected:
  // `dtr ARGS` in the test's folder, killed after `seconds`; `before` is
  // shell text run first in the same shell (a ulimit).
  dtr::testing::CliRun dtr(const std::string& args, int seconds = 120,
                           const std::string& before = "") {
    // run_cli puts its `env` text before the binary, in the same shell.
    std::string prefix = before.empty() ? "" : before + " && ";
    return dtr::testing::run_cli(dir_.path(), args, "",
                                 prefix + "timeout " + std::to_string(seconds));
  }

  // A small trace written by `dtr gen` to `name` (relative to the folder).
  void gen(const std::string& name, const std::string& model = "chain",
           int depth = 20) {
    auto r = dtr("gen " + model + " --depth " + std::to_string(depth) + " -o " +
                 quote(name));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  fs::path path(const std::string& name) const { return dir_ / name; }

  dtr::testing::TempDir dir_;
};

TEST_F(ReliabilityCliTest, ATraceNameCannotRunACommandThroughThePlot) {
  // gnuplot runs a line starting with '!' in the shell.
  const std::string name = "x\n!touch${IFS}PWNED\n#.log";
  gen(name);
  auto r = dtr("sweep " + quote(name) +
               " --ratios 1,0.5 --heuristics dtr --quiet --out out");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(path("PWNED")));
  EXPECT_FALSE(fs::exists(path("out") / "PWNED"));
  if (have_gnuplot()) {
    bool drawn = false;
    for (const auto& e : fs::directory_iterator(path("out"))) {
      drawn |= e.path().extension() == ".png" && fs::file_size(e.path()) > 0;
    }
    EXPECT_TRUE(drawn) << r.err;
  }
}

TEST_F(ReliabilityCliTest, AnUnboundedThrashLimitStillDraws) {
  gen("chain.log");
  auto r =
      dtr("sweep chain.log --ratios 1,0.5 --heuristics dtr "
          "--thrash-limit inf --quiet --out out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (have_gnuplot()) {
    EXPECT_GT(fs::file_size(path("out") / "chain.png"), 0u);
  }
}

TEST_F(ReliabilityCliTest, FewFileDescriptorsNeverPassForAMissingGnuplot) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  gen("chain.log");
  for (int limit : {4, 6, 8, 10}) {
    fs::remove_all(path("out"));
    auto r =
        dtr("sweep chain.log --ratios 1,0.5 --heuristics dtr --quiet "
            "--out out",
            120, "ulimit -n " + std::to_string(limit));
    EXPECT_EQ(r.err.find("not found"), std::string::npos)
        << "ulimit -n " << limit << ": " << r.err;
    if (r.exit_code == 0) {
      EXPECT_TRUE(fs::exists(path("out") / "chain.png"))
          << "ulimit -n " << limit << ": exit 0 without the plot";
    }
  }
}

TEST_F(ReliabilityCliTest, ReadErrorsEndWithALocatedError) {
  fs::create_directories(path("folder.log"));
  for (const std::string& args :
       {std::string("sim folder.log --budget-ratio 0.5"),
        std::string("plan folder.log --budget-ratio 0.5"),
        std::string("sim /proc/self/mem --budget-ratio 0.5")}) {
    auto r = dtr(args, 60);
    ASSERT_NE(r.exit_code, kTimedOut) << args << " did not end";
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("dtr: error: ["), std::string::npos) << r.err;
  }
}

TEST_F(ReliabilityCliTest, ManifestEntriesThatAreNotTracesAreErrors) {
  for (const char* log : {".", "", "sub"}) {
    fs::create_directories(path("sub"));
    std::ofstream(path("m.json"))
        << "{\"models\":[{\"log\":\"" << log << "\"}]}";
    auto r =
        dtr("sweep m.json --ratios 1 --heuristics dtr --no-plots "
            "--quiet --out out",
            60);
    EXPECT_EQ(r.exit_code, 1) << "log '" << log << "': " << r.err;
    EXPECT_NE(r.err.find("m.json"), std::string::npos) << r.err;
  }
  std::ofstream(path("empty.json")) << "{\"models\":[]}";
  auto r = dtr("sweep empty.json --no-plots --quiet --out out", 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("lists no models"), std::string::npos) << r.err;
  fs::create_directories(path("dir.json"));
  r = dtr("sweep dir.json --no-plots --quiet --out out", 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("[dir.json] is a directory"), std::string::npos)
      << r.err;
}

TEST_F(ReliabilityCliTest, InputWithoutLineBreaksFailsFast) {
  // Bounded by time, not by ulimit -v: ASan builds reserve terabytes.
  auto r = dtr("sim /dev/zero --budget-ratio 0.5", 60);
  ASSERT_NE(r.exit_code, kTimedOut) << "the read of /dev/zero did not end";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("[/dev/zero:1] the line is longer than 64 MiB"),
            std::string::npos)
      << r.err;
}

TEST_F(ReliabilityCliTest, AProfileThatWouldOverwriteItsTraceIsRefused) {
  gen("t.log");
  const std::string before = slurp(path("t.log"));
  auto r = dtr("sim t.log --budget-ratio 0.5 --profile ./t.log", 60);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is also an input"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(path("t.log")), before);
}

TEST_F(ReliabilityCliTest, TracesWithOneStemStayApart) {
  fs::create_directories(path("a"));
  fs::create_directories(path("b"));
  gen("a/net.log", "chain", 20);
  gen("b/net.log", "chain", 30);
  auto r =
      dtr("sweep a/net.log b/net.log --ratios 1,0.5 --heuristics dtr "
          "--quiet --no-plots --out out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> names;
  for (const auto& line : lines_of(slurp(path("out") / "results.csv"))) {
    names.insert(line.substr(0, line.find(',')));
  }
  EXPECT_EQ(names, (std::set<std::string>{"trace", "a/net", "b/net"}));
  r =
      dtr("sweep a/net.log a/net.log --ratios 1 --heuristics dtr --quiet "
          "--no-plots --out out2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("give each trace once"), std::string::npos) << r.err;
}

TEST_F(ReliabilityCliTest, TwoSweepsIntoOneFolderLeaveOneWholeResult) {
  gen("one.log", "chain", 20);
  gen("two.log", "chain", 40);
  const std::string sweep =
      quote(DTR_CLI_PATH) +
      " sweep %s --ratios 1,0.9,0.8,0.7,0.6,0.5 --heuristics all "
      "--threads 1 --quiet --no-plots --out out";
  std::string script = "cd " + quote(dir_.path().string()) + " || exit 1; ";
  int n = 0;
  for (const char* t : {"one.log", "two.log"}) {
    char buf[512];
    std::snprintf(buf, sizeof buf, sweep.c_str(), t);
    script += std::string(buf) + " & p" + std::to_string(++n) + "=$!; ";
  }
  script += "wait $p1 && wait $p2";
  ASSERT_EQ(std::system(script.c_str()), 0);
  std::set<std::string> traces;
  auto rows = lines_of(slurp(path("out") / "results.csv"));
  ASSERT_GT(rows.size(), 1u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    traces.insert(rows[i].substr(0, rows[i].find(',')));
  }
  EXPECT_EQ(traces.size(), 1u) << "rows of both sweeps in one file";
  for (const auto& e : fs::directory_iterator(path("out"))) {
    EXPECT_EQ(e.path().filename(), "results.csv") << "left behind";
  }
}

TEST_F(ReliabilityCliTest, ANameThatIsNotUtf8StillGivesValidJson) {
  const std::string name = "caf\xE9.log";
  gen(name);
  auto r = dtr("sim " + quote(name) +
                   " --budget-ratio 0.5 --json "
                   "--profile prof.json",
               60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);  // throws on invalid UTF-8
  EXPECT_EQ(j["trace"], "caf\xEF\xBF\xBD");
  nlohmann::json profile;
  EXPECT_NO_THROW(profile = nlohmann::json::parse(slurp(path("prof.json"))));
  EXPECT_TRUE(profile.contains("traceEvents"));
}

TEST_F(ReliabilityCliTest, RatiosReadAsBudgetRatiosAre) {
  // Both options read numbers alike: a subnormal ratio is a (hopeless)
  // budget, not a syntax error in one of them.
  auto r =
      dtr("sweep model:chain --ratios 4.9e-324 --heuristics dtr "
          "--quiet --no-plots --out out",
          60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace dtr::cli
