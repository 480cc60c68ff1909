# cmake -DSTAGE=... -DLIBDIR=... -DPKG_CONFIG=... -DCXX=... -DSOURCE=... -DWORK_DIR=...
#       [-DEXTRA_FLAGS=...] [-DSTD=c++20] [-DNAME=consumer_pkgconfig] -P pkgconfig_consumer.cmake
#
# Compiles and runs a one-file consumer the way a Makefile user would:
#   c++ -std=c++20 main.cpp $(pkg-config --cflags --libs tensogram)
# or, for the C API (CXX=cc, STD=c11):
#   cc -std=c11 -pedantic main.c $(pkg-config --cflags --libs tensogram)
foreach(var STAGE LIBDIR PKG_CONFIG CXX SOURCE WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "pkgconfig_consumer.cmake: ${var} is not set")
  endif()
endforeach()

# Only the stage's tensogram.pc (and the system's nlohmann_json.pc, which it
# requires) may be found; PKG_CONFIG_PATH is searched before the defaults.
set(ENV{PKG_CONFIG_PATH} "${STAGE}/${LIBDIR}/pkgconfig")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs tensogram
                OUTPUT_VARIABLE flags ERROR_VARIABLE err RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs tensogram failed: ${err}")
endif()
message(STATUS "pkg-config --cflags --libs tensogram: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
if(NOT STD)
  set(STD c++20)
endif()
if(NOT NAME)
  set(NAME consumer_pkgconfig)
endif()
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")

file(MAKE_DIRECTORY ${WORK_DIR})
set(exe ${WORK_DIR}/${NAME})
file(REMOVE ${exe})
# The rpath lets the program find the staged libtensogram.so without
# LD_LIBRARY_PATH, as it would find one installed under /usr/local.
execute_process(COMMAND ${CXX} -std=${STD} -Wall -Wextra -Wpedantic -Werror ${extra} ${SOURCE} -o ${exe}
                        ${flags} -Wl,-rpath,${STAGE}/${LIBDIR}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling the pkg-config consumer failed (${rc})")
endif()
execute_process(COMMAND ${exe} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the pkg-config consumer failed (${rc})")
endif()
