# Warnings every dtr target shares; kept as an interface target so that
# third-party code (LibTorch headers) is not compiled with them.
add_library(dtr_warnings INTERFACE)
target_compile_options(dtr_warnings INTERFACE -Wall -Wextra -Wpedantic
                       -Wno-unused-parameter)
