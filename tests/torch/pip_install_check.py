"""Installs the source tree with pip into a temporary directory and checks
that the installed package works on its own: `import dtr` from another
directory, with no DTR_TORCH_LIBRARY and nothing of the source tree on the
path, loads the libdtr_torch.so shipped inside the package; a checkpointed
computation equals plain PyTorch's. Cleans up after itself.

Usage: .venv/bin/python pip_install_check.py SOURCE_DIR
With DTR_CMAKE_BUILD_DIR set to a configured build directory of SOURCE_DIR
(ctest passes its own), setup.py reuses it instead of building from scratch.
"""
import os
import shutil
import subprocess
import sys
import tempfile

CHECK = r'''
import os, sys
import torch
import dtr

target, source = sys.argv[1], sys.argv[2]
def under(path, root):
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)
assert under(dtr.__file__, target), dtr.__file__
lib = dtr._find_library()
assert lib == os.path.join(os.path.dirname(dtr.__file__), "_lib",
                           "libdtr_torch.so"), lib
# The checkout's .venv (sys.prefix) lies under the source tree too.
leaked = [m.__file__ for m in list(sys.modules.values())
          if getattr(m, "__file__", None) and under(m.__file__, source)
          and not under(m.__file__, sys.prefix)]
assert not leaked, leaked

torch.manual_seed(0)
x = torch.randn(64, 64)
w = torch.randn(64, 64)
c = dtr.checkpoint(x)
with dtr.budget(1 << 30):
    y = torch.tanh(c @ w).relu() * 2
    dtr.evict_all()
    z = (y + 1).sum(dim=0)
want = (torch.tanh(x @ w).relu() * 2 + 1).sum(dim=0)
assert dtr.is_checkpoint(z)
assert torch.equal(dtr.decheckpoint(z), want)
stats = dtr.stats()
assert isinstance(stats, dict) and stats, stats
# The comparison ships as a subpackage with its own entry point.
import subprocess
done = subprocess.run([sys.executable, "-m", "dtr.compare", "--help"],
                      capture_output=True, text=True)
assert done.returncode == 0 and "MODULE:FUNCTION" in done.stdout, done
import dtr.compare
assert under(dtr.compare.__file__, target), dtr.compare.__file__
print("installed dtr OK:", dtr.__file__, "remat_ops =", stats.get("remat_ops"))
'''

# Paths a build must not leave in the source tree.
_SOURCE_LITTER = ("python/dtr.egg-info", "python/dtr/_lib", "dtr.egg-info",
                  "build/lib", "build/bdist.linux-x86_64")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    source = os.path.abspath(sys.argv[1])
    before = {p for p in _SOURCE_LITTER
              if os.path.exists(os.path.join(source, p))}
    tmp = tempfile.mkdtemp(prefix="dtr-pip-install-")
    try:
        target = os.path.join(tmp, "site")
        work = os.path.join(tmp, "elsewhere")
        os.mkdir(work)
        env = dict(os.environ)
        env.pop("DTR_TORCH_LIBRARY", None)
        env.pop("PYTHONPATH", None)
        subprocess.run([sys.executable, "-m", "pip", "install",
                        "--no-build-isolation", "--no-deps", "--no-index",
                        "--no-cache-dir", "--disable-pip-version-check",
                        "--target", target, source],
                       check=True, cwd=work, env=env)
        env.pop("DTR_CMAKE_BUILD_DIR", None)
        env["PYTHONPATH"] = target  # what --target needs; not the sources
        subprocess.run([sys.executable, "-c", CHECK, target, source],
                       check=True, cwd=work, env=env)
        after = {p for p in _SOURCE_LITTER
                 if os.path.exists(os.path.join(source, p))}
        if after - before:
            sys.exit(f"pip install left {sorted(after - before)} in {source}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
