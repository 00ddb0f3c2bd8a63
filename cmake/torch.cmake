# Finds LibTorch for dtr/torch. PyTorch 2.x ships LibTorch inside its Python
# wheel, so the Python that has torch tells where its CMake package lies
# (torch.utils.cmake_prefix_path). That Python is DTR_PYTHON: by default the
# checkout's .venv (made by scripts/setup-venv.sh), else python3 on PATH.
# An explicit Torch_DIR (say, Debian 13's libtorch-dev) wins over both.
set(DTR_MIN_TORCH_VERSION 2.6)
if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  set(_dtr_default_python ${PROJECT_SOURCE_DIR}/.venv/bin/python)
else()
  find_program(_dtr_default_python NAMES python3 python)
endif()
set(DTR_PYTHON "${_dtr_default_python}" CACHE FILEPATH
    "The Python whose torch dtr/torch builds against and the tests run")

if(NOT Torch_DIR AND DTR_PYTHON)
  execute_process(
    COMMAND ${DTR_PYTHON} -c
            "import torch.utils; print(torch.utils.cmake_prefix_path, end='')"
    OUTPUT_VARIABLE _dtr_torch_prefix
    RESULT_VARIABLE _dtr_torch_rc ERROR_QUIET)
  if(_dtr_torch_rc EQUAL 0 AND _dtr_torch_prefix)
    # The package config (share/cmake), and the torch directory itself: its
    # lib/ is then searched before the system's, so that a LibTorch of
    # another release in /usr/lib (Debian's libtorch-dev) is never mixed in.
    get_filename_component(_dtr_torch_root "${_dtr_torch_prefix}/../.."
                           ABSOLUTE)
    list(PREPEND CMAKE_PREFIX_PATH ${_dtr_torch_prefix} ${_dtr_torch_root})
  endif()
endif()
find_package(Torch QUIET GLOBAL)  # GLOBAL: the CLI links it elsewhere
if(Torch_FOUND AND Torch_VERSION VERSION_LESS DTR_MIN_TORCH_VERSION)
  message(FATAL_ERROR "dtr: LibTorch ${Torch_VERSION} at ${Torch_DIR} is "
          "older than ${DTR_MIN_TORCH_VERSION}, the oldest dtr/torch builds "
          "against; run scripts/setup-venv.sh or configure with "
          "-DDTR_BUILD_TORCH=OFF")
endif()
# A LibTorch built with libstdc++'s pre-C++11 ABI says so in TORCH_CXX_FLAGS:
# PyPI's torch 2.6 wheel is one (from 2.7 on PyPI's wheels use the C++11
# ABI, as Debian's libtorch-dev does). dtr cannot follow it: dtr/core uses
# std::pmr::string, which libstdc++ declares only under the C++11 ABI, and
# the Debian libraries dtr links (GoogleTest, CBC) use the C++11 ABI too.
# Built with the C++11 ABI against it, dtr_torch would miss every LibTorch
# function that takes a std::string when a program links or loads it.
if(Torch_FOUND AND TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR "dtr: LibTorch ${Torch_VERSION} at ${Torch_DIR} is "
          "built with libstdc++'s pre-C++11 ABI (${TORCH_CXX_FLAGS}), which "
          "dtr cannot use; build against a LibTorch with the C++11 ABI "
          "(PyPI's torch 2.7 or newer, Debian 13's libtorch-dev, or "
          "pytorch.org's cxx11-abi LibTorch) or configure with "
          "-DDTR_BUILD_TORCH=OFF")
endif()
