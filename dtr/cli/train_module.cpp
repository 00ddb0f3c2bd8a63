// The entry point of the module that holds `dtr train` (loaded by main.cpp
// only when that command runs, so that no other command loads LibTorch).
#include "dtr/cli/train_command.h"

extern "C" __attribute__((visibility("default"))) void dtr_add_train_command(
    CLI::App* app) {
  dtr::cli::add_train_command(*app);
}
