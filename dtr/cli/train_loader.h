#pragma once
/// `dtr train` lives in a module of its own (dtr_train_command.so) that
/// links LibTorch. main() loads it only when the command line asks for
/// `train`: LibTorch's start-up costs a second or two and over 500 MB of
/// address space, which `sim`, `gen` and the others do not pay.
#include <CLI/CLI.hpp>

namespace dtr::cli {

/// With `load`, loads the module (beside the binary in a build tree, in
/// LIBDIR/dtr when installed) and adds the full `train` command; throws
/// dtr::Error naming the module if it cannot be loaded. Without, adds a
/// placeholder that lists `train` in `dtr --help`.
void add_train_command_from_module(CLI::App& app, bool load);

}  // namespace dtr::cli
