# cmake -DBUILD_DIR=... -DSTAGE=... -DCONFIG=... -DTARGETS="a;b" -P install_stage.cmake
#
# Brings the installable targets up to date (a no-op after a full build, but
# it keeps this test correct when ctest is run on a partially built tree),
# then installs into a fresh stage so files left by an earlier run cannot
# hide a missing install rule.
foreach(var BUILD_DIR STAGE TARGETS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_stage.cmake: ${var} is not set")
  endif()
endforeach()

set(config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} ${config_args} --target ${TARGETS}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building ${TARGETS} failed (${rc})")
endif()

file(REMOVE_RECURSE ${STAGE})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} ${config_args} --prefix ${STAGE}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install into ${STAGE} failed (${rc})")
endif()

# The pieces a consumer relies on, per product; a missing one is an
# install-rule bug.
set(products tensogram metatensor streaming)
set(pc_modules tensogram metatensor metatensor-streaming)
if(WITH_IMPORTERS)
  list(APPEND products importers)
  list(APPEND pc_modules tensogram-importers)
endif()
if(WITH_FORTRAN)
  list(APPEND products fortran)
  list(APPEND pc_modules tensogram-fortran)
endif()
file(GLOB_RECURSE config_file ${STAGE}/*/tensogramConfig.cmake)
if(NOT config_file)
  message(FATAL_ERROR "tensogramConfig.cmake not installed under ${STAGE}")
endif()
get_filename_component(config_dir "${config_file}" DIRECTORY)
set(required ${STAGE}/include/tensogram.hpp ${STAGE}/include/tensogram/core/tgm_error.h
             ${STAGE}/include/tensogram.h ${STAGE}/include/tensogram/tensogram.h
             ${STAGE}/include/metatensor.hpp ${STAGE}/include/metatensor/stream_client.hpp)
foreach(product IN LISTS products)
  list(APPEND required ${config_dir}/${product}Targets.cmake)
endforeach()
foreach(module IN LISTS pc_modules)
  file(GLOB_RECURSE pc_file ${STAGE}/*/${module}.pc)
  if(NOT pc_file)
    message(FATAL_ERROR "${module}.pc not installed under ${STAGE}")
  endif()
endforeach()
if(WITH_FORTRAN)
  list(APPEND required ${STAGE}/include/tensogram.mod)
endif()
foreach(file IN LISTS required)
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "missing after install: ${file}")
  endif()
endforeach()
message(STATUS "installed into ${STAGE}")
