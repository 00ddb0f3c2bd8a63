# Warnings every dtr target shares; kept as an interface target so that
# third-party code (LibTorch headers) is not compiled with them.
add_library(dtr_warnings INTERFACE)
target_compile_options(dtr_warnings INTERFACE -Wall -Wextra -Wpedantic
                       -Wno-unused-parameter)
# clang's -Wpedantic flags the `, ##__VA_ARGS__` in dtr/core/error.h's
# DTR_ASSERT on every include; gcc and clang both support it.
target_compile_options(dtr_warnings INTERFACE
  $<$<CXX_COMPILER_ID:Clang>:-Wno-gnu-zero-variadic-macro-arguments>)
