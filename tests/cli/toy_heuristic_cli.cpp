// `dtr` with one more heuristic, registered before main() as a program
// that embeds dtr would: for tests/cli/toy_heuristic_cli_test.cpp. The
// rest of the program is dtr/cli/main.cpp itself.
#include "support/toy_heuristic.h"

namespace {
const bool kRegistered = (dtr::testing::register_toy_heuristic(), true);
}  // namespace
