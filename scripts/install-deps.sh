#!/usr/bin/env bash
# Installs what dtr needs from Debian 12's packages (run as root, or with
# sudo available). Idempotent: skips the install when everything is present.
set -euo pipefail
packages=(
  build-essential cmake            # compiler and build system
  nlohmann-json3-dev               # JSON (trace format, CLI output)
  libcli11-dev                     # command-line parsing
  libgtest-dev                     # unit tests
  coinor-libcbc-dev pkg-config     # MILP solver for the planners (dtr plan)
  libbenchmark-dev                 # micro-benchmarks
  gnuplot-nox                      # overhead-vs-budget plots (PNG)
  libtorch-dev                     # LibTorch integration (CPU, 1.13)
  libgloo-dev                      # `dtr train --nproc`: Gloo headers
  python3-torch python3-torchvision  # `import dtr` from Debian's Python
  clang libclang-rt-14-dev         # sanitizer build and libFuzzer runtime
  clang-format                     # scripts/check-format.sh (CI)
  llvm                             # llvm-symbolizer: readable sanitizer stacks
  python3-pip python3-setuptools python3-wheel  # `pip install .` (offline)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}"
fi
