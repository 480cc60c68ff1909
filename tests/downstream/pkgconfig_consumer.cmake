# cmake -DSTAGE=... -DLIBDIR=... -DPKG_CONFIG=... -DCXX=... -DMAKE=... -DMAKEFILE=...
#       -DSOURCE=... -DWORK_DIR=... -DMODULE=<pc module>
#       [-DCC=...] [-DFC=...] [-DDEFINES=...] [-DARGS=...] [-DEXTRA_FLAGS=...] -P pkgconfig_consumer.cmake
#
# Builds a one-file consumer with the pkg-config-only Makefile beside this
# script (makefile/Makefile) and runs it:
#   make -f makefile/Makefile MODULE=<module> SOURCE=<source> OUT=<exe> && <exe> <args>
# A source ending in .c is compiled as C11 with CC (the C API), one ending
# in .f90 with FC (the Fortran module).
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

set(exe ${WORK_DIR}/consumer_${MODULE})
set(cc_arg "")
if(SOURCE MATCHES "[.]c$")
  if(NOT CC)
    message(FATAL_ERROR "pkgconfig_consumer.cmake: CC is not set for the C source ${SOURCE}")
  endif()
  set(cc_arg CC=${CC})
  string(APPEND exe _c)
elseif(SOURCE MATCHES "[.]f90$")
  if(NOT FC)
    message(FATAL_ERROR "pkgconfig_consumer.cmake: FC is not set for the Fortran source ${SOURCE}")
  endif()
  set(cc_arg FC=${FC})
  string(APPEND exe _f)
endif()

file(MAKE_DIRECTORY ${WORK_DIR})
file(REMOVE ${exe})
# The rpath lets the program find the staged libraries without
# LD_LIBRARY_PATH, as it would find them installed under /usr/local.
execute_process(COMMAND ${MAKE} --no-print-directory -f ${MAKEFILE}
                        PKG_CONFIG=${PKG_CONFIG} CXX=${CXX} ${cc_arg} MODULE=${MODULE}
                        SOURCE=${SOURCE} OUT=${exe}
                        "EXTRA_FLAGS=${EXTRA_FLAGS}" "DEFINES=${DEFINES}"
                        "LDFLAGS=${EXTRA_FLAGS} -Wl,-rpath,${STAGE}/${LIBDIR}"
                WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the Makefile consumer of ${MODULE} (${SOURCE}) failed (${rc})")
endif()
execute_process(COMMAND ${exe} ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the Makefile consumer of ${MODULE} (${SOURCE}) failed (${rc})")
endif()
