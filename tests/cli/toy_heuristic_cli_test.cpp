// A heuristic registered once (tests/support/toy_heuristic.h) appears in
// the command line's list, help, default sweep and runs, with no other
// edit: the `dtr` built with it (toy_heuristic_cli.cpp) is run as a user
// would run `dtr`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/toy_heuristic.h"

#ifndef DTR_TOY_CLI_PATH
#error "DTR_TOY_CLI_PATH must name the dtr built with the toy heuristic"
#endif

namespace fs = std::filesystem;

namespace {

struct ToyRun {
  int exit_code = -1;
  std::string out;
};

// Runs the toy `dtr ARGS` in `dir`; stdout captured, stderr to a file.
ToyRun run_toy(const fs::path& dir, const std::string& args) {
  const fs::path out = dir / "stdout.txt";
  const std::string cmd =
      "cd '" + dir.string() + "' && '" DTR_TOY_CLI_PATH "' " + args + " >'" +
      out.string() + "' 2>'" + (dir / "stderr.txt").string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  ToyRun r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  std::ifstream in(out);
  std::ostringstream s;
  s << in.rdbuf();
  r.out = s.str();
  return r;
}

class ToyHeuristicCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtr_toy_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  const std::string toy_{dtr::testing::kToyHeuristic};
};

TEST_F(ToyHeuristicCliTest, IsListedWithItsSummaryAndInTheHelp) {
  const ToyRun list = run_toy(dir_, "heuristics");
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find(toy_ + "\tauto\tthe smallest storage first"),
            std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("dtr\tauto\t"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("random\t-\t"), std::string::npos) << list.out;
  const ToyRun help = run_toy(dir_, "sim --help");
  ASSERT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find(toy_), std::string::npos) << help.out;
}

TEST_F(ToyHeuristicCliTest, RunsInSimAndInADefaultSweep) {
  const ToyRun sim =
      run_toy(dir_, "sim model:unet --budget-ratio 0.6 --heuristic " + toy_ +
                        " --json --thrash-limit inf");
  ASSERT_EQ(sim.exit_code, 0) << sim.out;
  EXPECT_NE(sim.out.find("\"heuristic\":\"" + toy_ + "\""), std::string::npos)
      << sim.out;
  const ToyRun sweep =
      run_toy(dir_, "sweep model:unet --ratios 0.6 --threads 1 --out sweep");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
  std::ifstream csv(dir_ / "sweep" / "results.csv");
  std::ostringstream text;
  text << csv.rdbuf();
  EXPECT_NE(text.str().find("," + toy_ + ","), std::string::npos) << text.str();
}

}  // namespace
