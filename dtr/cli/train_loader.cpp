#include "dtr/cli/train_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "dtr/core/error.h"

namespace dtr::cli {

namespace {

namespace fs = std::filesystem;

// Beside the binary (a build tree) or in the installed library folder.
fs::path module_path() {
  std::error_code ec;
  const fs::path bin = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& p :
       {bin / DTR_TRAIN_MODULE, bin / ".." / DTR_TRAIN_MODULE_INSTALLED}) {
    if (fs::exists(p, ec)) return p;
  }
  return bin / ".." / DTR_TRAIN_MODULE_INSTALLED;
}

}  // namespace

void add_train_command_from_module(CLI::App& app, bool load) {
  if (!load) {
    app.add_subcommand("train",
                       "Train a LibTorch model under a budget, optionally "
                       "checked bitwise against plain LibTorch (see dtr "
                       "train --help)")
        ->allow_extras();
    return;
  }
  const fs::path path = module_path();
  // The module is never unloaded: its code runs until the process exits.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    throw Error("[train] cannot load " + path.string() + ": " + ::dlerror());
  }
  using AddCommand = void (*)(CLI::App*);
  auto add =
      reinterpret_cast<AddCommand>(::dlsym(handle, "dtr_add_train_command"));
  if (!add) {
    throw Error("[train] " + path.string() + " has no dtr_add_train_command");
  }
  add(&app);
}

}  // namespace dtr::cli
