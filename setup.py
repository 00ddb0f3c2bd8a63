"""Builds libdtr_torch.so with CMake and ships it as dtr/_lib/libdtr_torch.so.

The package metadata is in pyproject.toml; this file says where the
package is (python/dtr) and adds the CMake step to build_py. By default it configures a fresh temporary build directory
(tests, benchmarks and examples off), builds the dtr_torch target
and deletes the directory. Environment:

  DTR_CMAKE_BUILD_DIR  an already configured build directory of this source
                       tree: build dtr_torch there (usually a no-op) instead
                       of from scratch (the ctest install test uses this).
  DTR_BUILD_JOBS       parallel build jobs (default: the number of CPUs).
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build import build
from setuptools.command.build_py import build_py
from setuptools.command.egg_info import egg_info

SOURCE_DIR = os.path.dirname(os.path.abspath(__file__))
LIBRARY = "libdtr_torch.so"


def _temp_dir(prefix):
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _run(cmd):
    print("[dtr setup.py]", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _cache_value(build_dir, key):
    with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split("=", 1)[1].strip()
    return None


def _check_reused(build_dir):
    if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
        raise RuntimeError(f"[dtr setup.py] DTR_CMAKE_BUILD_DIR={build_dir!r} "
                           "is not a configured CMake build directory "
                           "(no CMakeCache.txt)")
    home = _cache_value(build_dir, "CMAKE_HOME_DIRECTORY")
    if home and os.path.realpath(home) != os.path.realpath(SOURCE_DIR):
        raise RuntimeError(f"[dtr setup.py] DTR_CMAKE_BUILD_DIR={build_dir!r} "
                           f"was configured for the sources in {home!r}, "
                           f"not {SOURCE_DIR!r}")


def build_library():
    """Builds dtr_torch and returns the path of libdtr_torch.so."""
    jobs = os.environ.get("DTR_BUILD_JOBS") or str(os.cpu_count() or 1)
    build_dir = os.environ.get("DTR_CMAKE_BUILD_DIR")
    if build_dir:
        build_dir = os.path.abspath(build_dir)
        _check_reused(build_dir)
    else:
        build_dir = _temp_dir("dtr-cmake-")
        # No build RPATH: the library finds LibTorch in the process that
        # imported torch, and this directory is deleted after the install.
        _run(["cmake", "-S", SOURCE_DIR, "-B", build_dir,
              "-DCMAKE_BUILD_TYPE=Release", "-DDTR_BUILD_TESTS=OFF",
              "-DDTR_BUILD_BENCH=OFF", "-DDTR_BUILD_EXAMPLES=OFF",
              "-DDTR_BUILD_TORCH=ON",
              # LibTorch is the one inside the torch this Python imports.
              f"-DDTR_PYTHON={sys.executable}",
              # The package ships libdtr_torch.so only: no MILP solver.
              "-DDTR_WITH_CBC=OFF",
              "-DBUILD_SHARED_LIBS=OFF", "-DCMAKE_SKIP_BUILD_RPATH=ON"])
        if (_cache_value(build_dir, "Torch_DIR") or "").endswith("NOTFOUND"):
            raise RuntimeError("[dtr setup.py] LibTorch not found: the Python "
                               f"package needs torch installed in "
                               f"{sys.executable} (scripts/setup-venv.sh)")
    _run(["cmake", "--build", build_dir, "--target", "dtr_torch", "-j", jobs])
    path = os.path.join(build_dir, "dtr", "torch", LIBRARY)
    if not os.path.isfile(path):
        raise RuntimeError(f"[dtr setup.py] the build did not produce {path}")
    return path


class BuildPyWithLibrary(build_py):
    """build_py, plus libdtr_torch.so copied to dtr/_lib/ in the build."""

    def run(self):
        super().run()
        if self.dry_run:
            return
        target = os.path.join(self.build_lib, "dtr", "_lib")
        self.mkpath(target)
        self.copy_file(build_library(), os.path.join(target, LIBRARY))


class BuildOutsideSources(build):
    """Keeps setuptools' build/ out of the source tree, where build*/ are
    CMake build directories that `import dtr` searches during development."""

    def initialize_options(self):
        super().initialize_options()
        self.build_base = _temp_dir("dtr-setuptools-")


class EggInfoOutsideSources(egg_info):
    """Writes dtr.egg-info to a temporary directory, not into python/."""

    def initialize_options(self):
        super().initialize_options()
        self.egg_base = _temp_dir("dtr-egg-info-")


class BinaryDistribution(Distribution):
    """A platform wheel (cp3X-linux_x86_64): the package holds a .so."""

    def has_ext_modules(self):
        return True


if sys.version_info < (3, 9):
    sys.exit("dtr needs Python 3.9 or newer")

setup(package_dir={"": "python"}, packages=["dtr", "dtr.compare"],
      distclass=BinaryDistribution,
      cmdclass={"build": BuildOutsideSources, "build_py": BuildPyWithLibrary,
                "egg_info": EggInfoOutsideSources})
