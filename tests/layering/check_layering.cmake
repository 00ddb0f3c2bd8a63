# The layers of docs/architecture.md, checked on the sources: each folder of
# dtr/ may include only the folders listed for it (and the standard library,
# third-party headers). Run by CTest as `layering`:
#   cmake -DSOURCE_DIR=<repo> -P tests/layering/check_layering.cmake
cmake_minimum_required(VERSION 3.25)
set(allowed_core       core)
set(allowed_trace      core trace)
set(allowed_models     core trace models)
set(allowed_sim        core trace models sim)
set(allowed_report     core trace models sim report)
set(allowed_plan       core trace plan)
set(allowed_torch      core trace models sim torch)
set(allowed_torch_train core trace models sim torch torch/train)
set(allowed_cli        core trace models sim report plan torch torch/train cli)

set(violations "")
foreach(layer core trace models sim report plan torch torch/train cli)
  string(REPLACE "/" "_" var "${layer}")
  file(GLOB sources ${SOURCE_DIR}/dtr/${layer}/*.h
                    ${SOURCE_DIR}/dtr/${layer}/*.cpp)
  if(layer STREQUAL "core")  # heuristics/ is part of the runtime
    file(GLOB more ${SOURCE_DIR}/dtr/core/heuristics/*.h
                   ${SOURCE_DIR}/dtr/core/heuristics/*.cpp
                   ${SOURCE_DIR}/dtr/core/heuristics/index/*.h
                   ${SOURCE_DIR}/dtr/core/heuristics/index/*.cpp)
    list(APPEND sources ${more})
  endif()
  foreach(source ${sources})
    file(STRINGS ${source} includes REGEX "^#include \"")
    foreach(line ${includes})
      string(REGEX MATCH "#include \"([^\"]+)\"" _ "${line}")
      set(header "${CMAKE_MATCH_1}")
      if(NOT header MATCHES "^dtr/")
        string(APPEND violations "\n  ${source}: ${header} (not under dtr/)")
        continue()
      endif()
      # The layer of a header: torch/train, or the first folder under dtr/.
      if(header MATCHES "^dtr/torch/train/")
        set(folder torch/train)
      else()
        string(REGEX REPLACE "^dtr/([^/]+)/.*" "\\1" folder "${header}")
      endif()
      if(NOT folder IN_LIST allowed_${var})
        string(APPEND violations "\n  ${source}: ${header}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "includes against the layering "
                      "(docs/architecture.md):${violations}")
endif()
message(STATUS "layering: ok")
