// Replays one trace under one heuristic and budget ratio through
// dtr::sim::simulate and nothing else, for instruction counts that do not
// depend on the machine's load:
//
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null
//       '--toggle-collect=dtr::sim::simulate(*'
//       build/bench/dtr_replay_only TRACE HEURISTIC RATIO
//
// The `dtr` command cannot serve: it loads LibTorch, whose start-up runs an
// instruction valgrind 3.19 does not decode (rdtscp). This links dtr_sim
// only. There is no thrash limit: a run that `dtr sim` would stop as
// thrashing (its default limit) is replayed whole, so that a profile of a
// low budget covers the whole step, not the part before the limit.
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "dtr/sim/simulator.h"
#include "dtr/trace/trace_reader.h"

namespace {

double parse_ratio(const std::string& text) {
  std::size_t used = 0;
  double ratio = 0;
  try {
    ratio = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(ratio > 0)) {
    throw std::invalid_argument("RATIO must be a number above 0, got '" + text +
                                "'");
  }
  return ratio;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s TRACE HEURISTIC RATIO\n", argv[0]);
    return 2;
  }
  try {
    const dtr::trace::Program program = dtr::trace::read_trace_file(argv[1]);
    const dtr::sim::Baseline baseline = dtr::sim::compute_baseline(program);
    dtr::sim::SimConfig config;
    config.heuristic = argv[2];
    config.budget_ratio = parse_ratio(argv[3]);
    config.thrash_limit = 1e9;  // see the header comment
    const dtr::sim::SimResult r = dtr::sim::simulate(program, baseline, config);
    std::printf(
        "%s: overhead %.4f, %llu evictions, %llu remats, simulated in %.1f ms "
        "(choosing victims %.1f ms)\n",
        std::string(dtr::sim::to_string(r.status)).c_str(), r.overhead,
        static_cast<unsigned long long>(r.evictions),
        static_cast<unsigned long long>(r.remats), r.sim_wall_ns / 1e6,
        r.choose_wall_ns / 1e6);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtr_replay_only: %s\n", e.what());
    return 1;
  }
  return 0;
}
