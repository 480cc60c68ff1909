# cmake -DSTAGE=... -DLIBDIR=... -DPKG_CONFIG=... -DCXX=... -DSOURCE=... -DWORK_DIR=...
#       -DMODULE=<pc module> [-DCC=...] [-DDEFINES=...] [-DARGS=...] [-DEXTRA_FLAGS=...]
#       -P pkgconfig_consumer.cmake
#
# Compiles and runs a one-file consumer the way a Makefile user would:
#   c++ -std=c++20 main.cpp $(pkg-config --cflags --libs <module>) && ./a.out <args>
# or, for a C source (the C API), with CC:
#   cc -std=c11 -pedantic main.c $(pkg-config --cflags --libs <module>)
foreach(var STAGE LIBDIR PKG_CONFIG CXX SOURCE WORK_DIR MODULE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "pkgconfig_consumer.cmake: ${var} is not set")
  endif()
endforeach()

# Only the stage's .pc files (and the system's nlohmann_json.pc, which
# tensogram.pc requires) may be found; PKG_CONFIG_PATH is searched first.
set(ENV{PKG_CONFIG_PATH} "${STAGE}/${LIBDIR}/pkgconfig")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ${MODULE}
                OUTPUT_VARIABLE flags ERROR_VARIABLE err RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs ${MODULE} failed: ${err}")
endif()
message(STATUS "pkg-config --cflags --libs ${MODULE}: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
separate_arguments(defines UNIX_COMMAND "${DEFINES}")
separate_arguments(args UNIX_COMMAND "${ARGS}")

set(compiler ${CXX})
set(std c++20)
set(exe ${WORK_DIR}/consumer_${MODULE})
if(SOURCE MATCHES "[.]c$")
  if(NOT CC)
    message(FATAL_ERROR "pkgconfig_consumer.cmake: CC is not set for the C source ${SOURCE}")
  endif()
  set(compiler ${CC})
  set(std c11)
  string(APPEND exe _c)
endif()

file(MAKE_DIRECTORY ${WORK_DIR})
file(REMOVE ${exe})
# The rpath lets the program find the staged libtensogram.so without
# LD_LIBRARY_PATH, as it would find one installed under /usr/local.
execute_process(COMMAND ${compiler} -std=${std} -Wall -Wextra -Wpedantic -Werror ${extra} ${defines} ${SOURCE} -o ${exe}
                        ${flags} -Wl,-rpath,${STAGE}/${LIBDIR}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling the pkg-config consumer failed (${rc})")
endif()
execute_process(COMMAND ${exe} ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the pkg-config consumer of ${MODULE} failed (${rc})")
endif()
