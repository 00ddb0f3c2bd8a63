#!/usr/bin/env bash
# Makes the project's Python environment, .venv/ at the checkout's root, with
# the packages pinned in requirements.txt (PyTorch among them). Idempotent:
# an existing .venv is kept and brought up to the pins. Every script, test
# and CI step uses .venv/bin/python; CMake builds dtr/torch against its torch.
# DTR_VENV_PYTHON picks the interpreter (default: python3.11, which the
# pinned torch wheel is built for; it is on Debian 12 and 13 machines alike).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${DTR_VENV_PYTHON:-python3.11}"
if ! command -v "$python" >/dev/null; then
  echo "setup-venv: $python not found; set DTR_VENV_PYTHON to a Python 3.11" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check \
  -r requirements.txt
.venv/bin/python -c "import torch; print('setup-venv: torch', torch.__version__, 'in .venv')"
