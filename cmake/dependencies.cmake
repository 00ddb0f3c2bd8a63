# Every dependency comes from a Debian package; no downloads at configure time.
# A missing package fails here with the package name to install.
function(dtr_require_package pkg debian)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR
      "dtr needs ${pkg}: install it with `apt-get install -y ${debian}`")
  endif()
endfunction()

dtr_require_package(nlohmann_json nlohmann-json3-dev 3.10)
dtr_require_package(CLI11 libcli11-dev)
find_package(Threads REQUIRED)
if(DTR_BUILD_TESTS)
  dtr_require_package(GTest libgtest-dev)
endif()
if(DTR_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "dtr: Google Benchmark not found (libbenchmark-dev); "
                   "skipping bench/")
    set(DTR_BUILD_BENCH OFF PARENT_SCOPE)
  endif()
endif()

# COIN-OR CBC solves the planners' MILP (dtr/plan, `dtr plan --planner milp`
# and lp-round); without it those two planners throw "rebuild with ...".
if(DTR_WITH_CBC)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(CBC QUIET IMPORTED_TARGET cbc)
  endif()
  if(NOT CBC_FOUND)
    message(FATAL_ERROR
      "dtr needs COIN-OR CBC for its MILP planner: install it with "
      "`apt-get install -y coinor-libcbc-dev pkg-config`, or configure with "
      "-DDTR_WITH_CBC=OFF to build without the milp and lp-round planners")
  endif()
else()
  message(STATUS "dtr: building without COIN-OR CBC (DTR_WITH_CBC=OFF): "
                 "the milp and lp-round planners are unavailable")
endif()
