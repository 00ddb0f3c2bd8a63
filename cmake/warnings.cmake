# Warnings every dtr target shares; kept as an interface target so that
# third-party code (LibTorch headers) is not compiled with them.
add_library(dtr_warnings INTERFACE)
target_compile_options(dtr_warnings INTERFACE -Wall -Wextra -Wpedantic
                       -Wno-unused-parameter)
# CI exports DTR_WERROR=ON so that every build its scripts configure
# (build.sh, sanitize.sh with clang, fuzz.sh) fails on a warning.
set(dtr_werror_default OFF)
if("$ENV{DTR_WERROR}")
  set(dtr_werror_default ON)
endif()
option(DTR_WERROR "Treat warnings in dtr's own code as errors"
       ${dtr_werror_default})
if(DTR_WERROR)
  target_compile_options(dtr_warnings INTERFACE -Werror)
endif()
# GCC 12 reports -Wrestrict falsely on std::string's operator+ and assign
# inlined at -O2 (GCC bug 105329): not a finding in our code.
target_compile_options(dtr_warnings INTERFACE
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
