// Tests of the `dtr` command line (dtr/cli): the built binary is run as a
// user would run it (path from the DTR_CLI_PATH compile definition), with
// stdout and stderr captured separately. Results must match the library's;
// every error exits non-zero with one line on stderr naming the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/trace_reader.h"
#include "tests/support/run_cli.h"

namespace dtr::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using RunResult = dtr::testing::CliRun;
using dtr::testing::quote;
using dtr::testing::slurp;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

bool on_path(const std::string& program) {
  std::string cmd = "command -v " + program + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("dtr_cli_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Runs `dtr ARGS` in the test's directory (ARGS is shell text). With
  // `stdout_to` (e.g. /dev/full), stdout goes there and r.out stays empty.
  // `env` (e.g. "PATH=/nonexistent") is put in dtr's environment.
  RunResult dtr(const std::string& args, const std::string& stdout_to = "",
                const std::string& env = "") {
    return dtr::testing::run_cli(dir_, args, stdout_to, env);
  }

  fs::path path(const std::string& name) const { return dir_ / name; }

  // True if dtr was built with LibTorch (has `dtr train`).
  bool train_available() { return dtr("train --help").exit_code == 0; }

  // traces/chain.log (by `dtr gen`) and ref.csv, a reference CSV with one
  // cell on it, for `dtr fidelity`.
  void write_fidelity_inputs() {
    fs::create_directories(path("traces"));
    ASSERT_EQ(dtr("gen chain -o " + quote(path("traces/chain.log").string()))
                  .exit_code,
              0);
    std::ofstream csv(path("ref.csv"));
    csv << "model,trace,heuristic,simrd_heuristic,budget_ratio,budget_bytes,"
           "baseline_peak_bytes,baseline_const_bytes,baseline_compute_ns,"
           "status,overhead,model_compute_ns,remat_compute_ns,remat_ops,"
           "evictions_heuristic,evictions_eager,peak_bytes,trace_ops,cpu_s\n"
           "chain,chain.log,dtr,DTR,1.0,0,0,0,0,ok,1.0,1,0,0,0,0,0,10,0.1\n";
  }

  fs::path dir_;
};

// An error: non-zero exit, nothing on stdout, exactly one line on stderr
// that mentions every needle.
::testing::AssertionResult is_one_line_error(
    const RunResult& r, std::initializer_list<std::string> needles) {
  if (r.exit_code == 0) {
    return ::testing::AssertionFailure() << "exit code 0; stderr: " << r.err;
  }
  if (!r.out.empty()) {
    return ::testing::AssertionFailure() << "stdout is not empty: " << r.out;
  }
  std::string text = r.err;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.empty()) return ::testing::AssertionFailure() << "stderr is empty";
  if (text.find('\n') != std::string::npos) {
    return ::testing::AssertionFailure() << "stderr has more than one line:\n"
                                         << r.err;
  }
  for (const auto& n : needles) {
    if (text.find(n) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "stderr '" << text << "' does not mention '" << n << "'";
    }
  }
  return ::testing::AssertionSuccess();
}

// Errors raised by dtr itself (not by argument parsing) print
// "dtr: error: ..." and exit 1.
void expect_dtr_error(const RunResult& r,
                      std::initializer_list<std::string> needles) {
  EXPECT_TRUE(is_one_line_error(r, needles));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("dtr: error: ", 0), 0u) << r.err;
}

// The numbers of `dtr sim --json` must be the library's for the same run.
void expect_matches_library(const json& j, const sim::SimResult& r,
                            const sim::Baseline& b) {
  EXPECT_EQ(j["heuristic"], r.heuristic);
  EXPECT_EQ(j["policy"], std::string(to_string(r.policy)));
  EXPECT_EQ(j["budget_bytes"].get<std::int64_t>(), r.budget_bytes);
  EXPECT_DOUBLE_EQ(j["budget_ratio"].get<double>(), r.budget_ratio);
  EXPECT_EQ(j["baseline_peak_bytes"].get<std::int64_t>(), b.peak_bytes);
  EXPECT_EQ(j["baseline_compute_ns"].get<std::int64_t>(), b.compute_ns);
  EXPECT_EQ(j["model_compute_ns"].get<std::int64_t>(), r.model_compute_ns);
  EXPECT_EQ(j["remat_compute_ns"].get<std::int64_t>(), r.remat_compute_ns);
  EXPECT_DOUBLE_EQ(j["overhead"].get<double>(), r.overhead);
  EXPECT_EQ(j["peak_bytes"].get<std::int64_t>(), r.peak_bytes);
  EXPECT_EQ(j["evictions"].get<std::uint64_t>(), r.evictions);
  EXPECT_EQ(j["remats"].get<std::uint64_t>(), r.remats);
  EXPECT_EQ(j["status"], std::string(to_string(r.status)));
}

// ---------------------------------------------------------------------------
// dtr sim

// `auto` runs the six fixed heuristics and names the one it reports.
TEST_F(CliTest, SimAutoNamesTheChosenHeuristic) {
  RunResult r =
      dtr("sim model:chain --budget-ratio 0.5 --heuristic auto --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["heuristic"], "auto");
  const std::string chosen = j["chosen"].get<std::string>();
  EXPECT_NE(std::string(" dtr dtr-eq dtr-local msps lru size ")
                .find(" " + chosen + " "),
            std::string::npos)
      << chosen;
  RunResult text = dtr("sim model:chain --budget-ratio 0.5 --heuristic auto");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("heuristic auto (chosen " + chosen + ")"),
            std::string::npos)
      << text.out;
}

TEST_F(CliTest, SimJsonPrintsOneObjectWithTheResultKeys) {
  RunResult r = dtr("sim model:chain --budget-ratio 0.5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  json j = json::parse(lines[0], nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << r.out;
  for (const char* key :
       {"trace", "heuristic", "policy", "budget_ratio", "budget_bytes",
        "baseline_peak_bytes", "baseline_compute_ns", "model_compute_ns",
        "remat_compute_ns", "overhead", "peak_bytes", "evictions", "remats",
        "status", "sim_wall_ns"}) {
    EXPECT_TRUE(j.contains(key)) << "missing key " << key << " in " << r.out;
  }
  ASSERT_TRUE(j["trace"].is_string());
  EXPECT_EQ(j["trace"], "chain");
  EXPECT_EQ(j["heuristic"], "dtr");
  EXPECT_EQ(j["policy"], "eager");
  EXPECT_DOUBLE_EQ(j["budget_ratio"].get<double>(), 0.5);
  for (const char* key :
       {"budget_bytes", "baseline_peak_bytes", "baseline_compute_ns",
        "model_compute_ns", "remat_compute_ns", "peak_bytes", "evictions",
        "remats", "sim_wall_ns"}) {
    EXPECT_TRUE(j[key].is_number_integer()) << key << ": " << j[key].dump();
    EXPECT_GE(j[key].get<double>(), 0) << key;
  }
  EXPECT_TRUE(j["overhead"].is_number());
  std::int64_t peak = j["baseline_peak_bytes"].get<std::int64_t>();
  EXPECT_EQ(j["budget_bytes"].get<std::int64_t>(),
            static_cast<std::int64_t>(std::floor(0.5 * double(peak))));
  EXPECT_LE(j["peak_bytes"].get<std::int64_t>(),
            j["budget_bytes"].get<std::int64_t>());
  std::set<std::string> statuses = {"ok", "oom", "thrash"};
  EXPECT_TRUE(statuses.count(j["status"].get<std::string>())) << j["status"];
  double model = j["model_compute_ns"].get<double>();
  double remat = j["remat_compute_ns"].get<double>();
  ASSERT_GT(model, 0);
  EXPECT_DOUBLE_EQ(j["overhead"].get<double>(), (model + remat) / model);

  // Same numbers as the library gives for the same run.
  sim::NamedProgram np = sim::load_program("model:chain");
  sim::Baseline b = sim::compute_baseline(np.program);
  sim::SimConfig c;
  c.budget_ratio = 0.5;
  expect_matches_library(j, sim::simulate(np.program, b, c), b);
}

TEST_F(CliTest, SimJsonHonoursItsOptions) {
  sim::NamedProgram np = sim::load_program("model:chain");
  sim::Baseline b = sim::compute_baseline(np.program);
  std::int64_t bytes = b.peak_bytes * 6 / 10;
  RunResult r = dtr("sim model:chain --budget-bytes " + std::to_string(bytes) +
                    " --heuristic lru --policy banish --thrash-limit 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  sim::SimConfig c;
  c.heuristic = "lru";
  c.policy = DeallocPolicy::kBanish;
  c.budget_bytes = bytes;
  c.thrash_limit = 3;
  sim::SimResult lib = sim::simulate(np.program, b, c);
  EXPECT_EQ(j["budget_bytes"].get<std::int64_t>(), bytes);
  expect_matches_library(j, lib, b);
}

TEST_F(CliTest, SimPlainOutputReportsTheStatus) {
  RunResult r = dtr("sim model:chain --budget-ratio 1.0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("trace chain"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("status ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overhead 1.0000"), std::string::npos) << r.out;
}

TEST_F(CliTest, SimOfAMissingTraceFile) {
  RunResult r = dtr("sim no_such_trace.log --budget-ratio 0.5");
  expect_dtr_error(r, {"no_such_trace.log", "cannot open"});
}

TEST_F(CliTest, SimOfAMalformedTrace) {
  fs::path bad = path("bad.log");
  {
    std::ofstream out(bad);
    out << "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x1\"}\n"
           "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"8\",\"NAME\":\"x1\"}\n"
           "{\"INSTRUCTION\":\"FROB\",\"NAME\":\"x1\"}\n";
  }
  RunResult r = dtr("sim " + quote(bad.string()) + " --budget-ratio 0.5");
  expect_dtr_error(r,
                   {"[" + bad.string() + ":3]", "unknown instruction 'FROB'"});
}

TEST_F(CliTest, SimWithAnUnknownHeuristic) {
  RunResult r = dtr("sim model:chain --budget-ratio 0.5 --heuristic nosuchh");
  expect_dtr_error(r, {"unknown heuristic 'nosuchh'"});
}

TEST_F(CliTest, SimWithAnUnknownPolicy) {
  RunResult r = dtr("sim model:chain --budget-ratio 0.5 --policy nosuchp");
  expect_dtr_error(r, {"nosuchp"});
}

TEST_F(CliTest, SimWithAnUnknownModel) {
  RunResult r = dtr("sim model:nosuchm --budget-ratio 0.5");
  expect_dtr_error(r, {"unknown model 'nosuchm'"});
}

TEST_F(CliTest, SimWithoutABudget) {
  RunResult r = dtr("sim model:chain");
  expect_dtr_error(r, {"--budget-ratio"});
}

TEST_F(CliTest, SimWithABadThrashLimit) {
  RunResult r = dtr("sim model:chain --budget-ratio 0.5 --thrash-limit 0.5");
  expect_dtr_error(r, {"thrash limit", "0.5"});
}

TEST_F(CliTest, SimWithANegativeRatio) {
  RunResult r = dtr("sim model:chain --budget-ratio -0.5");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("-0.5"), std::string::npos) << r.err;
  EXPECT_TRUE(is_one_line_error(r, {"--budget-ratio", "-0.5"}));
}

TEST_F(CliTest, AnUnknownSubcommand) {
  RunResult r = dtr("frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
  EXPECT_TRUE(is_one_line_error(r, {"frobnicate"}));
}

// ---------------------------------------------------------------------------
// dtr sweep

TEST_F(CliTest, SweepWritesResultsCsvAndAPlot) {
  RunResult r =
      dtr("sweep model:chain --ratios 1.0,0.5 --heuristics dtr,lru "
          "--out " +
          quote(path("out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::path csv = path("out") / "results.csv";
  ASSERT_TRUE(fs::exists(csv)) << r.out << r.err;
  std::vector<std::string> lines = split_lines(slurp(csv));
  ASSERT_EQ(lines.size(), 5u)
      << slurp(csv);  // header + 2 heuristics x 2 ratios
  std::vector<std::string> header = split_csv(lines[0]);
  auto column = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  for (const char* name :
       {"trace", "heuristic", "policy", "budget_ratio", "budget_bytes",
        "baseline_peak_bytes", "overhead", "peak_bytes", "status"}) {
    EXPECT_GE(column(name), 0) << "no column " << name << " in " << lines[0];
  }
  ASSERT_GE(column("heuristic"), 0);
  ASSERT_GE(column("budget_ratio"), 0);
  ASSERT_GE(column("status"), 0);
  std::set<std::pair<std::string, double>> cells;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> row = split_csv(lines[i]);
    ASSERT_EQ(row.size(), header.size()) << lines[i];
    EXPECT_EQ(row[column("trace")], "chain");
    EXPECT_EQ(row[column("policy")], "eager");
    cells.insert(
        {row[column("heuristic")], std::stod(row[column("budget_ratio")])});
    EXPECT_LE(std::stoll(row[column("peak_bytes")]),
              std::stoll(row[column("budget_bytes")]));
    if (std::stod(row[column("budget_ratio")]) == 1.0) {
      EXPECT_EQ(row[column("status")], "ok");
      EXPECT_EQ(std::stod(row[column("overhead")]), 1.0);
    }
  }
  EXPECT_EQ(cells,
            (std::set<std::pair<std::string, double>>{
                {"dtr", 1.0}, {"dtr", 0.5}, {"lru", 1.0}, {"lru", 0.5}}));
  if (on_path("gnuplot")) {
    fs::path png = path("out") / "chain.png";
    ASSERT_TRUE(fs::exists(png)) << r.out << r.err;
    EXPECT_GT(fs::file_size(png), 0u);
    EXPECT_EQ(slurp(png).substr(0, 4), "\x89PNG");
  }
}

// Figure 3's layout: planners beside heuristics, at the same budgets, in
// the same CSV (cells named plan:NAME).
TEST_F(CliTest, SweepWithPlannersAddsTheirCellsAtTheSameBudgets) {
  RunResult r =
      dtr("sweep 'model:chain?depth=12' --ratios 1.0,0.6 --heuristics dtr "
          "--planners chen-sqrtn,checkpoint-all --no-plots --out " +
          quote(path("out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plan:chen-sqrtn"), std::string::npos) << r.out;
  std::vector<std::string> lines =
      split_lines(slurp(path("out") / "results.csv"));
  ASSERT_EQ(lines.size(), 7u);  // header + (1 heuristic + 2 planners) x 2
  std::vector<std::string> header = split_csv(lines[0]);
  auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(
        std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::map<std::pair<std::string, double>, std::vector<std::string>> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> row = split_csv(lines[i]);
    ASSERT_EQ(row.size(), header.size()) << lines[i];
    rows[{row[column("heuristic")], std::stod(row[column("budget_ratio")])}] =
        row;
  }
  for (double ratio : {1.0, 0.6}) {
    const auto& dtr_row = rows.at({"dtr", ratio});
    for (const char* planner : {"plan:chen-sqrtn", "plan:checkpoint-all"}) {
      const auto& row = rows.at({planner, ratio});
      EXPECT_EQ(row[column("budget_bytes")], dtr_row[column("budget_bytes")])
          << planner << " at " << ratio;
      if (row[column("status")] == "ok") {
        EXPECT_GE(std::stod(row[column("overhead")]), 1.0) << planner;
        EXPECT_LE(std::stoll(row[column("peak_bytes")]),
                  std::stoll(row[column("budget_bytes")]))
            << planner << " at " << ratio;
      }
    }
  }
  // Keeping everything fits the full budget exactly, and nothing less.
  EXPECT_EQ(rows.at({"plan:checkpoint-all", 1.0})[column("status")], "ok");
  EXPECT_EQ(rows.at({"plan:checkpoint-all", 1.0})[column("overhead")], "1");
  EXPECT_EQ(rows.at({"plan:checkpoint-all", 0.6})[column("status")], "oom");
  // Chen's sqrt(n) segments (0.53 of this chain's peak) fit in 0.6 of it.
  EXPECT_EQ(rows.at({"plan:chen-sqrtn", 0.6})[column("status")], "ok");
}

TEST_F(CliTest, SweepRejectsAnUnknownPlannerBeforeRunning) {
  RunResult r = dtr("sweep model:chain --planners chen-sqrtn,nosuchp --out " +
                    quote(path("out").string()));
  expect_dtr_error(r, {"nosuchp"});
  EXPECT_FALSE(fs::exists(path("out") / "results.csv"));
}

TEST_F(CliTest, SweepRejectsABadRatioList) {
  RunResult r = dtr("sweep model:chain --ratios 1.0,abc --out " +
                    quote(path("out").string()));
  expect_dtr_error(r, {"'abc'"});
  EXPECT_FALSE(fs::exists(path("out") / "results.csv"));
}

TEST_F(CliTest, SweepRejectsAnUnknownHeuristic) {
  RunResult r = dtr("sweep model:chain --heuristics dtr,nosuchh --out " +
                    quote(path("out").string()));
  expect_dtr_error(r, {"nosuchh"});
}

// ---------------------------------------------------------------------------
// dtr gen

TEST_F(CliTest, GenWritesATraceThatSimAccepts) {
  fs::path file = path("chain.log");
  RunResult g = dtr("gen chain -o " + quote(file.string()));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  ASSERT_TRUE(fs::exists(file));
  std::vector<std::string> lines = split_lines(slurp(file));
  ASSERT_GT(lines.size(), 10u);
  for (const auto& line : lines) {
    ASSERT_TRUE(json::parse(line, nullptr, false).is_object()) << line;
  }
  // The trace is exactly the built-in model's.
  trace::Program from_file = trace::read_trace_file(file.string());
  trace::Program built_in = sim::load_program("model:chain").program;
  EXPECT_EQ(from_file.ops.size(), built_in.ops.size());
  EXPECT_EQ(from_file.steps.size(), built_in.steps.size());
  EXPECT_EQ(from_file.total_cost_ns, built_in.total_cost_ns);

  RunResult s =
      dtr("sim " + quote(file.string()) + " --budget-ratio 1.0 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  json j = json::parse(s.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << s.out;
  EXPECT_EQ(j["trace"], "chain");  // the file stem
  EXPECT_EQ(j["status"], "ok");
  EXPECT_DOUBLE_EQ(j["overhead"].get<double>(), 1.0);
  EXPECT_EQ(j["baseline_compute_ns"].get<std::int64_t>(),
            built_in.total_cost_ns);
}

TEST_F(CliTest, GenToStdoutWritesTheSameTrace) {
  fs::path file = path("chain.log");
  ASSERT_EQ(dtr("gen chain -o " + quote(file.string())).exit_code, 0);
  RunResult r = dtr("gen chain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, slurp(file));
}

TEST_F(CliTest, GenOfAnUnknownModel) {
  RunResult r = dtr("gen nosuchm -o " + quote(path("x.log").string()));
  expect_dtr_error(r, {"unknown model 'nosuchm'"});
}

// ---------------------------------------------------------------------------
// Output that is not written is an error (exit 1, one line naming it).

// /dev/full accepts open() and fails every write with ENOSPC.
bool have_dev_full() {
  return fs::exists("/dev/full");
}

// The one-line error of a result that could not be written; `what` is the
// path or "standard output".
void expect_write_error(const RunResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("dtr: error: [write] cannot write " + what, 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(CliTest, SimJsonToAFullStdoutIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  RunResult r = dtr("sim model:chain --budget-ratio 0.5 --json", "/dev/full");
  expect_write_error(r, "standard output");
}

TEST_F(CliTest, SimTextToAFullStdoutIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  RunResult r = dtr("sim model:chain --budget-ratio 1.0", "/dev/full");
  expect_write_error(r, "standard output");
}

// `dtr sim --profile`: a Chrome trace (docs/profiling.md) on the simulated
// clock; the full checks of its contents are in tests/sim/profile_test.cpp.
TEST_F(CliTest, SimProfileWritesATraceViewersOpen) {
  RunResult r = dtr("sim model:chain --budget-ratio 0.5 --json --profile " +
                    quote(path("p.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json result = json::parse(r.out);
  std::ifstream in(path("p.json"));
  const json p = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(p.is_discarded()) << slurp(path("p.json")).substr(0, 500);
  std::set<std::string> kinds;  // phase and category or name
  std::size_t evictions = 0;
  for (const auto& e : p["traceEvents"]) {
    kinds.insert(e["ph"].get<std::string>() + " " +
                 e.value("cat", e["name"].get<std::string>()));
    if (e["ph"] == "i" && e["name"] == "evict") {
      ++evictions;
      EXPECT_TRUE(e["args"]["score"].is_number()) << e.dump();
    }
    if (e["ph"] == "C" && e["name"] == "dtr bytes") {
      EXPECT_LE(e["args"]["dtr_bytes"], result["budget_bytes"]);
    }
  }
  EXPECT_TRUE(kinds.count("M process_name")) << r.out;
  EXPECT_TRUE(kinds.count("C dtr bytes"));
  EXPECT_TRUE(kinds.count("C budget bytes"));
  EXPECT_TRUE(kinds.count("X op"));
  EXPECT_TRUE(kinds.count("X replay"));
  EXPECT_EQ(evictions, result["evictions"].get<std::size_t>());
}

TEST_F(CliTest, SimProfileThatCannotBeWrittenIsAnError) {
  const std::string missing = path("no-dir/p.json").string();
  expect_dtr_error(
      dtr("sim model:chain --budget-ratio 0.5 --profile " + quote(missing)),
      {missing});
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  expect_write_error(
      dtr("sim model:chain --budget-ratio 0.5 --profile /dev/full"),
      "/dev/full");
}

TEST_F(CliTest, GenToAFullStdoutIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  RunResult r = dtr("gen chain", "/dev/full");
  expect_write_error(r, "standard output");
}

// Needs dtr/cli/gen_command.cpp to call dtr::trace::close_output(f, o.out)
// before it reports "wrote N lines" (that file is being changed elsewhere);
// enable it with that change.
TEST_F(CliTest, GenToAFullFileIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  RunResult r = dtr("gen chain -o /dev/full");
  expect_write_error(r, "/dev/full");
  EXPECT_EQ(r.err.find("wrote"), std::string::npos) << r.err;
}

TEST_F(CliTest, SweepSummaryToAFullStdoutIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  RunResult r =
      dtr("sweep model:chain --ratios 1.0 --heuristics dtr --quiet "
          "--no-plots --out " +
              quote(path("out").string()),
          "/dev/full");
  expect_write_error(r, "standard output");
}

TEST_F(CliTest, SweepResultsCsvThatCannotBeWrittenIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  fs::create_directories(path("out"));
  fs::create_symlink("/dev/full", path("out") / "results.csv");
  RunResult r =
      dtr("sweep model:chain --ratios 1.0,0.5 --heuristics dtr "
          "--quiet --no-plots --out " +
          quote(path("out").string()));
  EXPECT_TRUE(is_one_line_error(r, {"results.csv", "No space left"}));
  expect_write_error(r, (path("out") / "results.csv").string());
}

TEST_F(CliTest, SweepOutDirThatCannotBeCreatedIsAnError) {
  { std::ofstream(path("a_file")) << "x"; }
  RunResult r =
      dtr("sweep model:chain --ratios 1.0 --heuristics dtr --quiet "
          "--out " +
          quote((path("a_file") / "out").string()));
  expect_dtr_error(r, {"[sweep] cannot create", "a_file"});
}

TEST_F(CliTest, SweepPlotThatCannotBeDrawnIsAnError) {
  if (!on_path("gnuplot")) GTEST_SKIP() << "gnuplot is not installed";
  // A directory where the PNG should go: gnuplot runs and cannot write it.
  fs::create_directories(path("out") / "chain.png");
  RunResult r =
      dtr("sweep model:chain --ratios 1.0,0.5 --heuristics dtr "
          "--quiet --out " +
          quote(path("out").string()));
  expect_dtr_error(r, {"[plot]", "chain.png"});
}

TEST_F(CliTest, SweepWithoutGnuplotWarnsAndWritesTheData) {
  // gnuplot missing is a warning, not an error: the results are written.
  RunResult r =
      dtr("sweep model:chain --ratios 1.0,0.5 --heuristics dtr "
          "--quiet --out " +
              quote(path("out").string()),
          "", "PATH=/nonexistent");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: gnuplot not found"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(path("out") / "results.csv"));
  EXPECT_TRUE(fs::exists(path("out") / "chain.dat"));
  EXPECT_FALSE(fs::exists(path("out") / "chain.png"));
}

TEST_F(CliTest, FidelityMarkdownThatCannotBeWrittenIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  write_fidelity_inputs();
  std::string inputs = "fidelity --reference " +
                       quote(path("ref.csv").string()) + " --traces " +
                       quote(path("traces").string());
  RunResult ok = dtr(inputs + " --markdown " + quote(path("f.md").string()));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(slurp(path("f.md")).find("chain.log"), std::string::npos);
  expect_write_error(dtr(inputs + " --markdown /dev/full"), "/dev/full");
  expect_write_error(dtr(inputs + " --speed-markdown /dev/full"), "/dev/full");
}

TEST_F(CliTest, FidelityRepeatsKeepsTheOutcomeAndSaysSo) {
  write_fidelity_inputs();
  std::string inputs = "fidelity --reference " +
                       quote(path("ref.csv").string()) + " --traces " +
                       quote(path("traces").string());
  RunResult once = dtr(inputs + " --markdown " + quote(path("1.md").string()));
  RunResult thrice =
      dtr(inputs + " --repeats 3 --markdown " + quote(path("3.md").string()) +
          " --speed-markdown " + quote(path("s.md").string()));
  ASSERT_EQ(once.exit_code, 0) << once.err;
  ASSERT_EQ(thrice.exit_code, 0) << thrice.err;
  EXPECT_EQ(slurp(path("1.md")), slurp(path("3.md")));  // same outcomes
  EXPECT_NE(slurp(path("s.md")).find("simulated 3 times"), std::string::npos);
}

TEST_F(CliTest, TrainRecordThatCannotBeWrittenIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  if (!train_available()) {
    GTEST_SKIP() << "dtr was built without LibTorch";
  }
  RunResult r =
      dtr("train --model mlp --batch 8 --steps 1 --bytes-cost "
          "--record /dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("dtr: error: [write] cannot write /dev/full"),
            std::string::npos)
      << r.err;
}

// `dtr train --profile`: wall-clock spans of the kernel's calls, and the
// LibTorch layer's counters next to DTR's.
TEST_F(CliTest, TrainProfileWritesATraceViewersOpen) {
  if (!train_available()) {
    GTEST_SKIP() << "dtr was built without LibTorch";
  }
  RunResult r = dtr(
      "train --model mlp --batch 8 --steps 1 --budget-ratio 0.9 --profile " +
      quote(path("p.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path("p.json"));
  const json p = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(p.is_discarded());
  std::set<std::string> names;
  for (const auto& e : p["traceEvents"]) {
    names.insert(e["ph"].get<std::string>() + " " +
                 e["name"].get<std::string>());
  }
  EXPECT_TRUE(names.count("C dtr bytes"));
  EXPECT_TRUE(names.count("C allocator bytes"));
  EXPECT_TRUE(names.count("C held bytes"));
  EXPECT_TRUE(names.count("X aten::addmm")) << "no op span";
  if (have_dev_full()) {
    expect_write_error(dtr("train --model mlp --batch 8 --steps 1 --profile "
                           "/dev/full"),
                       "/dev/full");
  }
}

TEST_F(CliTest, TrainToAFullStdoutIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  if (!train_available()) {
    GTEST_SKIP() << "dtr was built without LibTorch";
  }
  RunResult r =
      dtr("train --model mlp --batch 8 --steps 1 --bytes-cost", "/dev/full");
  expect_write_error(r, "standard output");
}

// ---------------------------------------------------------------------------
// Options that accept nonsense are rejected, naming the option.

// The one-line error of an option out of range: exit 1, names the option
// and quotes the value.
void expect_option_error(const RunResult& r, const std::string& option,
                         const std::string& value) {
  EXPECT_TRUE(is_one_line_error(r, {option, "'" + value + "'"}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
}

TEST_F(CliTest, SimRejectsNonsenseNumbers) {
  expect_option_error(dtr("sim model:chain --budget-ratio nan"),
                      "--budget-ratio", "nan");
  expect_option_error(dtr("sim model:chain --budget-ratio inf"),
                      "--budget-ratio", "inf");
  expect_option_error(dtr("sim model:chain --budget-ratio 0"), "--budget-ratio",
                      "0");
  expect_option_error(dtr("sim model:chain --budget-ratio 1e400"),
                      "--budget-ratio", "1e400");
  expect_option_error(dtr("sim model:chain --budget-bytes -5"),
                      "--budget-bytes", "-5");
  expect_option_error(dtr("sim model:chain --budget-bytes 1.5"),
                      "--budget-bytes", "1.5");
  expect_option_error(dtr("sim model:chain --budget-ratio 0.5 --seed -1"),
                      "--seed", "-1");
  RunResult r = dtr("sim model:chain --budget-ratio 0.5 --thrash-limit nan");
  expect_dtr_error(r, {"thrash limit", "nan"});
}

TEST_F(CliTest, SimRejectsABudgetThatDoesNotFitIn64Bits) {
  expect_option_error(dtr("sim model:chain --budget-bytes 9223372036854775808"),
                      "--budget-bytes", "9223372036854775808");
  expect_option_error(
      dtr("sim model:chain --budget-bytes 99999999999999999999999"),
      "--budget-bytes", "99999999999999999999999");
  // The largest budget is accepted as it is, not clamped.
  RunResult r =
      dtr("sim model:chain --budget-bytes 9223372036854775807 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["budget_bytes"].get<std::int64_t>(),
            std::numeric_limits<std::int64_t>::max());
  // Decimal, not octal.
  r = dtr("sim model:chain --budget-bytes 010 --json");
  EXPECT_EQ(json::parse(r.out)["budget_bytes"].get<std::int64_t>(), 10);
}

TEST_F(CliTest, SimRejectsARatioWhoseBudgetOverflows) {
  for (const char* ratio : {"1e20", "1e308"}) {
    RunResult r = dtr(std::string("sim model:chain --budget-ratio ") + ratio);
    std::string shown = std::string(ratio) == "1e20" ? "1e+20" : "1e+308";
    expect_dtr_error(r,
                     {"budget ratio " + shown, "exceeds the largest budget"});
  }
  // A large ratio whose budget fits is a budget like any other.
  RunResult r = dtr("sim model:chain --budget-ratio 1000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["status"], "ok");
}

TEST_F(CliTest, SweepRejectsNonsenseNumbers) {
  std::string out = " --out " + quote(path("out").string());
  expect_option_error(dtr("sweep model:chain --threads 0" + out), "--threads",
                      "0");
  expect_option_error(dtr("sweep model:chain --threads -2" + out), "--threads",
                      "-2");
  expect_option_error(dtr("sweep model:chain --threads 100000" + out),
                      "--threads", "100000");
  expect_dtr_error(dtr("sweep model:chain --ratios 0.5,inf" + out),
                   {"--ratios", "'inf'"});
  expect_dtr_error(dtr("sweep model:chain --ratios nan" + out),
                   {"--ratios", "'nan'"});
  expect_dtr_error(dtr("sweep model:chain --thrash-limit 0.5" + out),
                   {"thrash limit", "0.5"});
  EXPECT_FALSE(fs::exists(path("out") / "results.csv"));
}

TEST_F(CliTest, SweepRejectsARatioWhoseBudgetOverflows) {
  RunResult r = dtr("sweep model:chain --ratios 0.5,1e300 --quiet --out " +
                    quote(path("out").string()));
  expect_dtr_error(r, {"[sweep] chain", "budget ratio 1e+300"});
  EXPECT_FALSE(fs::exists(path("out") / "results.csv"));
}

TEST_F(CliTest, FidelityRejectsNonsenseNumbers) {
  expect_option_error(dtr("fidelity --threads 0"), "--threads", "0");
  expect_option_error(dtr("fidelity --threads -1"), "--threads", "-1");
  expect_option_error(dtr("fidelity --repeats 0"), "--repeats", "0");
  expect_option_error(dtr("fidelity --tolerance nan"), "--tolerance", "nan");
  expect_option_error(dtr("fidelity --tolerance -0.1"), "--tolerance", "-0.1");
}

// ---------------------------------------------------------------------------
// dtr sim exit status (README "Using the command line"): 0 the run trained,
// 2 it ran out of memory or thrashed (the result is still printed), 1 error.

TEST_F(CliTest, SimOfAnInfeasibleBudgetPrintsTheResultAndExitsTwo) {
  for (const char* bytes : {"0", "1"}) {
    RunResult r =
        dtr(std::string("sim model:chain --json --budget-bytes ") + bytes);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j["status"], "oom");
    EXPECT_EQ(j["budget_bytes"].get<std::int64_t>(), std::stoll(bytes));
    EXPECT_TRUE(j.contains("message")) << r.out;
    EXPECT_EQ(r.err.rfind("dtr: error: [sim] status oom at budget ", 0), 0u)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  RunResult text = dtr("sim model:chain --budget-bytes 0");
  EXPECT_EQ(text.exit_code, 2) << text.err;
  EXPECT_NE(text.out.find("status oom"), std::string::npos) << text.out;
}

TEST_F(CliTest, SimThatThrashesExitsTwo) {
  // --thrash-limit 1: the first rematerialization gives up.
  RunResult r =
      dtr("sim model:chain --budget-ratio 0.3 --thrash-limit 1 --json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["status"], "thrash");
  EXPECT_NE(r.err.find("status thrash"), std::string::npos) << r.err;
}

TEST_F(CliTest, SimOfAnInfeasibleBudgetToAFullStdoutIsAWriteError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  // The result could not be written: that is the error that counts.
  expect_write_error(dtr("sim model:chain --budget-bytes 0", "/dev/full"),
                     "standard output");
}

// ---------------------------------------------------------------------------
// Determinism: a sweep's results do not depend on the number of threads.

// results.csv without sim_wall_ns (the only wall-clock column).
std::string deterministic_columns(const std::string& csv) {
  std::vector<std::string> lines = split_lines(csv);
  if (lines.empty()) return "";
  std::vector<std::string> header = split_csv(lines[0]);
  auto it = std::find(header.begin(), header.end(), "sim_wall_ns");
  EXPECT_NE(it, header.end()) << lines[0];
  std::size_t skip = static_cast<std::size_t>(it - header.begin());
  std::string out;
  for (const auto& line : lines) {
    std::vector<std::string> row = split_csv(line);
    EXPECT_EQ(row.size(), header.size()) << line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i != skip) out += row[i] + (i + 1 < row.size() ? "," : "");
    }
    out += "\n";
  }
  return out;
}

TEST_F(CliTest, SweepResultsDoNotDependOnTheNumberOfThreads) {
  // Small built-in models; `random` is seeded, treelstm's shape too.
  std::string args =
      "sweep model:chain 'model:treelstm?depth=4&seed=3' model:lstm "
      "--heuristics all --ratios 1.0,0.8,0.6,0.5,0.4,0.3,0.2,0.1 --quiet";
  std::vector<std::string> csv, summary, dat;
  for (int threads : {1, 2, 3}) {
    std::string out = "out" + std::to_string(threads);
    RunResult r =
        dtr(args + " --threads " + std::to_string(threads) + " --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    csv.push_back(slurp(path(out) / "results.csv"));
    summary.push_back(r.out.substr(0, r.out.find("wrote:")));
    std::string data;
    for (const char* stem : {"chain", "treelstm_depth_4_seed_3", "lstm"}) {
      fs::path file = path(out) / (std::string(stem) + ".dat");
      EXPECT_TRUE(fs::exists(file)) << file;
      data += slurp(file);
    }
    dat.push_back(data);
  }
  ASSERT_GT(split_lines(csv[0]).size(), 100u) << csv[0];
  for (std::size_t i = 1; i < csv.size(); ++i) {
    EXPECT_EQ(deterministic_columns(csv[i]), deterministic_columns(csv[0]));
    EXPECT_EQ(summary[i], summary[0]);
    EXPECT_EQ(dat[i], dat[0]);
  }
}

// ---------------------------------------------------------------------------
// dtr train (built with LibTorch): options are checked before any training.

TEST_F(CliTest, TrainRejectsNonsenseNumbers) {
  if (!train_available()) {
    GTEST_SKIP() << "dtr was built without LibTorch";
  }
  const std::string m = "train --model mlp --steps 1 ";
  expect_option_error(dtr(m + "--budget-ratio -1"), "--budget-ratio", "-1");
  expect_option_error(dtr(m + "--budget-ratio 0"), "--budget-ratio", "0");
  expect_option_error(dtr(m + "--budget-ratio 1.5"), "--budget-ratio", "1.5");
  expect_option_error(dtr(m + "--budget-ratio nan"), "--budget-ratio", "nan");
  expect_option_error(dtr(m + "--budget-ratio 1e20"), "--budget-ratio", "1e20");
  expect_option_error(dtr(m + "--budget-bytes -5"), "--budget-bytes", "-5");
  expect_option_error(dtr(m + "--budget-bytes 9223372036854775808"),
                      "--budget-bytes", "9223372036854775808");
  expect_option_error(dtr(m + "--batch -3"), "--batch", "-3");
  expect_option_error(dtr(m + "--batch 0"), "--batch", "0");
  expect_option_error(dtr("train --model mlp --steps 0"), "--steps", "0");
  expect_option_error(dtr("train --model mlp --steps -1"), "--steps", "-1");
  expect_option_error(dtr(m + "--lr nan"), "--lr", "nan");
  expect_option_error(dtr(m + "--lr -0.1"), "--lr", "-0.1");
}

}  // namespace
}  // namespace dtr::cli
