# DTR_BUILD_FUZZ adds the libFuzzer targets in fuzz/ (clang only). Every
# target that follows gets libFuzzer's coverage instrumentation, so the
# fuzzer sees the edges inside dtr_core, dtr_trace and dtr_sim, not just its
# own file.
option(DTR_BUILD_FUZZ "Build the libFuzzer targets in fuzz/ (clang)" OFF)
if(DTR_BUILD_FUZZ)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # The invariant checks that run after every step are left out of the
    # coverage (fuzz/coverage_ignorelist.txt; edit it, then rebuild from
    # scratch: the compiler reads it, CMake does not track it).
    add_compile_options(-fsanitize=fuzzer-no-link
      -fsanitize-coverage-ignorelist=${PROJECT_SOURCE_DIR}/fuzz/coverage_ignorelist.txt)
    # Linked too, so other executables (dtr, the tests) find the coverage
    # callbacks without libFuzzer's main.
    add_link_options(-fsanitize=fuzzer-no-link)
    message(STATUS "dtr: fuzz targets on (fuzz/)")
  else()
    message(WARNING "dtr: DTR_BUILD_FUZZ needs clang (libFuzzer); "
                    "skipping fuzz/. Configure with CMAKE_CXX_COMPILER=clang++")
    set(DTR_BUILD_FUZZ OFF)
  endif()
endif()
