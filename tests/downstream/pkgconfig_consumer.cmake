# cmake -DSTAGE=... -DLIBDIR=... -DPKG_CONFIG=... -DCXX=... -DMAKE=... -DMAKEFILE=...
#       -DSOURCE=... -DWORK_DIR=... -DMODULE=<pc module>
#       [-DDEFINES=...] [-DARGS=...] [-DEXTRA_FLAGS=...] -P pkgconfig_consumer.cmake
#
# Builds a one-file consumer with the pkg-config-only Makefile beside this
# script (makefile/Makefile) and runs it:
#   make -f makefile/Makefile MODULE=<module> SOURCE=<source> OUT=<exe> && <exe> <args>
foreach(var STAGE LIBDIR PKG_CONFIG CXX MAKE MAKEFILE SOURCE WORK_DIR MODULE)
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
separate_arguments(args UNIX_COMMAND "${ARGS}")

file(MAKE_DIRECTORY ${WORK_DIR})
set(exe ${WORK_DIR}/consumer_${MODULE})
file(REMOVE ${exe})
# The rpath lets the program find the staged libraries without
# LD_LIBRARY_PATH, as it would find them installed under /usr/local.
execute_process(COMMAND ${MAKE} --no-print-directory -f ${MAKEFILE}
                        PKG_CONFIG=${PKG_CONFIG} CXX=${CXX} MODULE=${MODULE}
                        SOURCE=${SOURCE} OUT=${exe}
                        "EXTRA_FLAGS=${EXTRA_FLAGS}" "DEFINES=${DEFINES}"
                        "LDFLAGS=${EXTRA_FLAGS} -Wl,-rpath,${STAGE}/${LIBDIR}"
                WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the Makefile consumer of ${MODULE} failed (${rc})")
endif()
execute_process(COMMAND ${exe} ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the Makefile consumer of ${MODULE} failed (${rc})")
endif()
