// dtr: Dynamic Tensor Rematerialization tools. See README.md.
#include <charconv>
#include <cmath>
#include <iostream>
#include <string_view>

#include "dtr/cli/commands.h"
#include "dtr/core/error.h"
#include "dtr/core/heuristic.h"
#include "dtr/plan/planner.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/trace/output_file.h"

#ifdef DTR_HAVE_TORCH
#include "dtr/cli/train_loader.h"
#endif

namespace dtr::cli {

std::vector<double> parse_ratio_list(const std::string& text) {
  std::vector<double> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    // The same reading as --budget-ratio's (validators.h): from_chars,
    // which takes a subnormal ratio where std::stod reports a range error.
    double v = 0;
    const char* last = item.data() + item.size();
    auto [stop, ec] = std::from_chars(item.data(), last, v);
    if (item.empty() || ec != std::errc() || stop != last || !(v > 0) ||
        !std::isfinite(v)) {
      throw InvalidArgument("[--ratios] '" + item +
                            "' is not a positive finite number");
    }
    out.push_back(v);
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> parse_heuristic_list(const std::string& text) {
  if (text == "all") return heuristic_names();
  std::vector<std::string> out = split_list(text);
  for (const auto& name : out) sim::check_heuristic_name(name);  // throws
  return out;
}

std::vector<std::string> parse_planner_list(const std::string& text) {
  if (text == "all") return plan::planner_names();
  std::vector<std::string> out = split_list(text);
  for (const auto& name : out) plan::check_planner_name(name);  // throws
  return out;
}

}  // namespace dtr::cli

int main(int argc, char** argv) {
  CLI::App app{
      "dtr: Dynamic Tensor Rematerialization - simulate training under a "
      "memory budget, compare heuristics, train LibTorch models"};
  app.require_subcommand(1);
  dtr::cli::add_sim_command(app);
  dtr::cli::add_sweep_command(app);
  dtr::cli::add_fidelity_command(app);
  dtr::cli::add_gen_command(app);
  dtr::cli::add_plan_command(app);
  dtr::cli::add_heuristics_command(app);
  try {
#ifdef DTR_HAVE_TORCH
    const bool train = argc > 1 && std::string_view(argv[1]) == "train";
    dtr::cli::add_train_command_from_module(app, train);
#endif
    if (argc > 1 && argv[1][0] != '-') {
      std::string known;
      for (const CLI::App* sub : app.get_subcommands({})) {
        known += (known.empty() ? "" : ", ") + sub->get_name();
      }
      bool exists = false;
      for (const CLI::App* sub : app.get_subcommands({})) {
        exists |= sub->get_name() == argv[1];
      }
      if (!exists) {
        throw dtr::InvalidArgument(std::string("unknown subcommand '") +
                                   argv[1] + "' (known: " + known + ")");
      }
    }
    app.parse(argc, argv);
    // A result on stdout that never arrived is an error, like a file.
    dtr::trace::flush_stdout();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other error; --help has the details.
    std::cerr << "dtr: error: " << e.what() << " (see dtr --help)\n";
    return dtr::cli::kExitError;
  } catch (const dtr::cli::RunFailed& e) {
    // The result was printed; it must also have arrived.
    try {
      dtr::trace::flush_stdout();
    } catch (const std::exception& lost) {
      std::cerr << "dtr: error: " << lost.what() << "\n";
      return dtr::cli::kExitError;
    }
    std::cerr << "dtr: error: " << e.what() << "\n";
    return dtr::cli::kExitRunFailed;
  } catch (const std::exception& e) {
    std::cerr << "dtr: error: " << e.what() << "\n";
    return dtr::cli::kExitError;
  }
  return 0;
}
