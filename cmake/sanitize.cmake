# DTR_SANITIZE=address,undefined (any -fsanitize= list) instruments every
# target that follows; meant for clang (scripts/sanitize.sh, scripts/fuzz.sh).
# Undefined behaviour aborts instead of printing and going on, so a test that
# hits it fails rather than passing with a line in its log.
set(DTR_SANITIZE "" CACHE STRING
    "Comma-separated -fsanitize= list, e.g. address,undefined (clang)")
if(DTR_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(WARNING "dtr: DTR_SANITIZE is meant for clang "
                    "(CMAKE_CXX_COMPILER=clang++); trying with "
                    "${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=${DTR_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${DTR_SANITIZE})
  if(DTR_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  message(STATUS "dtr: sanitizers ${DTR_SANITIZE}")
endif()
