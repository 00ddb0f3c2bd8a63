#!/usr/bin/env bash
# Installs what dtr needs from Debian's packages (run as root, or with sudo
# available), on Debian 12 and 13 alike, then the Python environment .venv/
# with the pinned PyTorch (scripts/setup-venv.sh). Idempotent: skips the
# install when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."
# clang's sanitizer and libFuzzer runtimes are versioned with the release's
# default clang: 14 on Debian 12, 19 on Debian 13.
case "$(cut -d. -f1 /etc/debian_version 2>/dev/null)" in
  13) clang_rt=libclang-rt-19-dev ;;
  *) clang_rt=libclang-rt-14-dev ;;
esac
packages=(
  build-essential cmake            # compiler and build system
  nlohmann-json3-dev               # JSON (trace format, CLI output)
  libcli11-dev                     # command-line parsing
  libgtest-dev                     # unit tests
  coinor-libcbc-dev pkg-config     # MILP solver for the planners (dtr plan)
  libbenchmark-dev                 # micro-benchmarks
  gnuplot-nox                      # overhead-vs-budget plots (PNG)
  libgloo-dev                      # `dtr train --nproc`: Gloo headers
  libxxhash-dev                    # hashes of plain inputs (dtr/torch)
  python3-venv                     # .venv (scripts/setup-venv.sh)
  clang "$clang_rt"                # sanitizer build and libFuzzer runtime
  llvm                             # llvm-symbolizer: readable sanitizer stacks
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
scripts/setup-venv.sh
