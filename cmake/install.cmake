# `cmake --install build --prefix P`: the public headers, the libraries, the
# `dtr` command (runnable from P/bin) and a CMake package, so that another
# project can `find_package(dtr REQUIRED)` and link dtr::core, dtr::trace,
# dtr::models, dtr::sim and, when the LibTorch layer was built, dtr::torch.
# Included from the top-level CMakeLists.txt after every target is defined.
include(CMakePackageConfigHelpers)

set(DTR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/dtr)

# Exported names: dtr_core -> dtr::core (the build tree has the same ALIASes).
set(_dtr_export_targets dtr_core dtr_trace dtr_models dtr_sim)
set_target_properties(dtr_core PROPERTIES EXPORT_NAME core)
set_target_properties(dtr_trace PROPERTIES EXPORT_NAME trace)
set_target_properties(dtr_models PROPERTIES EXPORT_NAME models)
set_target_properties(dtr_sim PROPERTIES EXPORT_NAME sim)
if(TARGET dtr_torch)
  set(DTR_INSTALL_WITH_TORCH ON)
  list(APPEND _dtr_export_targets dtr_torch)
  set_target_properties(dtr_torch PROPERTIES EXPORT_NAME torch)
else()
  set(DTR_INSTALL_WITH_TORCH OFF)
endif()

# Installed binaries find the installed libdtr_torch.so next door, and
# LibTorch where it was found at build time (inside the PyTorch wheel).
file(RELATIVE_PATH _dtr_bin_to_lib
     /_/${CMAKE_INSTALL_BINDIR} /_/${CMAKE_INSTALL_LIBDIR})
set(_dtr_torch_rpath "")
if(TARGET dtr_torch AND DTR_TORCH_LIBRARY_DIR)
  set(_dtr_torch_rpath "${DTR_TORCH_LIBRARY_DIR}")
  set_target_properties(dtr_torch PROPERTIES
    INSTALL_RPATH "${_dtr_torch_rpath}")
endif()
set_target_properties(dtr PROPERTIES
  INSTALL_RPATH "$ORIGIN/${_dtr_bin_to_lib};${_dtr_torch_rpath}")

install(TARGETS ${_dtr_export_targets} EXPORT dtrTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS dtr RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET dtr_train_command)
  # LIBDIR/dtr/dtr_train_command.so: libdtr_torch.so one folder up.
  set_target_properties(dtr_train_command PROPERTIES
    INSTALL_RPATH "$ORIGIN/..;${_dtr_torch_rpath}")
  install(TARGETS dtr_train_command
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/dtr)
endif()

# Public headers only: the private ones of dtr/torch (checkpoint_context.h,
# kernel_parts.h, ...) and the model builders' internals stay out.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dtr/core/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dtr/core
  FILES_MATCHING PATTERN "*.h")
file(GLOB _dtr_trace_headers ${PROJECT_SOURCE_DIR}/dtr/trace/*.h)
list(FILTER _dtr_trace_headers EXCLUDE REGEX "_impl\\.h$")
install(FILES ${_dtr_trace_headers}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dtr/trace)
file(GLOB _dtr_sim_headers ${PROJECT_SOURCE_DIR}/dtr/sim/*.h)
install(FILES ${_dtr_sim_headers}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dtr/sim)
install(FILES ${PROJECT_SOURCE_DIR}/dtr/models/model_registry.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dtr/models)
if(DTR_INSTALL_WITH_TORCH)
  install(FILES ${PROJECT_SOURCE_DIR}/dtr/torch/dtr_torch.h
                ${PROJECT_SOURCE_DIR}/dtr/torch/checkpointed_module.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dtr/torch)
endif()

install(EXPORT dtrTargets NAMESPACE dtr::
  DESTINATION ${DTR_INSTALL_CMAKEDIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/dtrConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dtrConfig.cmake
  INSTALL_DESTINATION ${DTR_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dtrConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dtrConfig.cmake
              ${PROJECT_BINARY_DIR}/dtrConfigVersion.cmake
  DESTINATION ${DTR_INSTALL_CMAKEDIR})

if(DTR_INSTALL_WITH_TORCH)
  message(STATUS "dtr: install exports dtr::core, dtr::trace, dtr::models, "
                 "dtr::sim, dtr::torch")
else()
  message(STATUS "dtr: install exports dtr::core, dtr::trace, dtr::models, "
                 "dtr::sim (no dtr::torch: LibTorch layer not built)")
endif()
