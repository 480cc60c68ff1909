# Install rules and the exported CMake / pkg-config packages.
#
# Included at the end of the top-level CMakeLists.txt (after tools/ has been
# added), so targets defined by subdirectories are visible here.
#
# Layout under the prefix:
#   include/tensogram.hpp, include/tensogram/**    libtensogram's public headers
#   include/metatensor.hpp, include/metatensor/**  libmetatensor's public headers
#   lib/libtensogram.so*, .a                       the core library (shared, static)
#   lib/libtensogram_importers.so*, .a             GRIB/NetCDF (component importers)
#   lib/libmetatensor.so*, .a                      metatensor (component metatensor)
#   lib/libmetatensor_streaming.so*, .a            QUIC/HTTP streaming (component streaming)
#   lib/libtensogram_f.a, include/tensogram.mod    the Fortran module (component fortran)
#   lib/cmake/tensogram/                           find_package(tensogram CONFIG
#                                                    [COMPONENTS metatensor importers streaming fortran])
#   lib/pkgconfig/{tensogram,tensogram-importers,metatensor,metatensor-streaming,tensogram-fortran}.pc
#   bin/tensogram, bin/metatensor                  the CLIs (when built)
#   share/bash-completion/completions/tensogram    its bash completion

include(CMakePackageConfigHelpers)

set(TENSOGRAM_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tensogram"
    CACHE STRING "Where tensogramConfig.cmake is installed (relative to the prefix)")
set(TENSOGRAM_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where the .pc files are installed (relative to the prefix)")

# pkg-config modules whose imported-target prefix differs from what
# pkg_check_modules recorded can be pinned here as PREFIX=module.
set(TENSOGRAM_PKGCONFIG_MODULES "XXHASH=libxxhash")

# The prefix, libdir and includedir lines of every .pc file: relative to the
# file's own directory (${pcfiledir}), so one file works for `make install`,
# DESTDIR packaging and `cmake --install --prefix <stage>` alike.
if(IS_ABSOLUTE "${TENSOGRAM_INSTALL_PKGCONFIGDIR}")
  set(TENSOGRAM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  # e.g. lib/pkgconfig -> "../..", lib/x86_64-linux-gnu/pkgconfig -> "../../..".
  file(RELATIVE_PATH up "/prefix/${TENSOGRAM_INSTALL_PKGCONFIGDIR}" "/prefix")
  string(REGEX REPLACE "/+$" "" up "${up}")
  set(TENSOGRAM_PC_PREFIX "\${pcfiledir}/${up}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TENSOGRAM_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(TENSOGRAM_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TENSOGRAM_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(TENSOGRAM_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# tensogram_private_dependencies(<static-target> <out-config> <out-requires> <out-libs>)
# What a consumer of the static library must find again: derived from the
# target's link libraries, so a new dependency needs no change here.
#   PkgConfig::<prefix>  -> tensogram_find_pkgconfig(...) and Requires.private
#   <Pkg>::<name>        -> find_dependency(<Pkg>) (Threads also -pthread)
#   /path/to/libx.so     -> Libs.private as is (libraries found by path)
# Our own targets (tensogram::..., metatensor::...) are other components.
function(tensogram_private_dependencies target out_config out_requires out_libs)
  get_target_property(libs ${target} LINK_LIBRARIES)
  set(prefixes "")
  set(packages "")
  set(paths "")
  foreach(lib IN LISTS libs)
    if(IS_ABSOLUTE "${lib}")
      list(APPEND paths "${lib}")
      continue()
    endif()
    string(REGEX MATCHALL "[A-Za-z0-9_.+-]+::[A-Za-z0-9_.+-]+" targets "${lib}")
    foreach(t IN LISTS targets)
      if(t MATCHES "^PkgConfig::(.+)$")
        list(APPEND prefixes "${CMAKE_MATCH_1}")
      elseif(t MATCHES "^(tensogram|metatensor)::")
        # a component of this package
      elseif(t MATCHES "^([^:]+)::")
        list(APPEND packages "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES prefixes)
  list(REMOVE_DUPLICATES packages)
  list(REMOVE_DUPLICATES paths)
  set(config "")
  set(requires "")
  set(pc_libs "")
  foreach(pkg IN LISTS packages)
    if(pkg STREQUAL "nlohmann_json")
      continue()  # public, found unconditionally by the config file
    endif()
    string(APPEND config "find_dependency(${pkg})\n")
    if(pkg STREQUAL "Threads")
      list(APPEND pc_libs "-pthread")
    elseif(pkg STREQUAL "CURL")
      list(APPEND requires "libcurl")
    endif()
  endforeach()
  foreach(prefix IN LISTS prefixes)
    set(module "")
    foreach(pair IN LISTS TENSOGRAM_PKGCONFIG_MODULES)
      if(pair MATCHES "^${prefix}=(.+)$")
        set(module "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    if(module STREQUAL "" AND DEFINED __pkg_config_arguments_${prefix})
      # What pkg_check_modules(<prefix> ...) was asked for, minus its keywords.
      set(module ${__pkg_config_arguments_${prefix}})
      list(REMOVE_ITEM module REQUIRED QUIET NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH IMPORTED_TARGET GLOBAL)
    endif()
    if(module STREQUAL "")
      message(FATAL_ERROR "cmake/install.cmake: cannot tell which pkg-config module PkgConfig::${prefix} "
                          "comes from; add ${prefix}=<module> to TENSOGRAM_PKGCONFIG_MODULES")
    endif()
    string(APPEND config "tensogram_find_pkgconfig(${prefix} ${module})\n")
    list(APPEND requires ${module})
  endforeach()
  list(APPEND pc_libs ${paths})
  list(JOIN requires ", " requires)
  list(JOIN pc_libs " " pc_libs)
  set(${out_config} "${config}" PARENT_SCOPE)
  set(${out_requires} "${requires}" PARENT_SCOPE)
  set(${out_libs} "${pc_libs}" PARENT_SCOPE)
endfunction()

# tensogram_install_product(<component> TARGET <shared-target> NAMESPACE <ns>
#   EXPORT_NAME <name> PC_NAME <pc> LIB_NAME <ld name> DESCRIPTION <text>
#   [PC_REQUIRES <pc modules>])
# Installs <target> and <target>_static as <ns>::<name> / <ns>::<name>_static
# in the export set <component>Targets, and writes <pc>.pc.
function(tensogram_install_product component)
  cmake_parse_arguments(P "" "TARGET;NAMESPACE;EXPORT_NAME;PC_NAME;LIB_NAME;DESCRIPTION;PC_REQUIRES" "" ${ARGN})
  set_target_properties(${P_TARGET} PROPERTIES EXPORT_NAME ${P_EXPORT_NAME})
  # The products depend on one another (libmetatensor on libtensogram): each
  # finds the others beside it, so a relocated or staged prefix works without
  # LD_LIBRARY_PATH (a program's own RUNPATH does not reach its libraries'
  # dependencies).
  set_target_properties(${P_TARGET} PROPERTIES INSTALL_RPATH "$ORIGIN")
  set_target_properties(${P_TARGET}_static PROPERTIES EXPORT_NAME ${P_EXPORT_NAME}_static)
  install(TARGETS ${P_TARGET} ${P_TARGET}_static
    EXPORT ${component}Targets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT ${component}Targets
    NAMESPACE ${P_NAMESPACE}::
    FILE ${component}Targets.cmake
    DESTINATION ${TENSOGRAM_INSTALL_CMAKEDIR}
    COMPONENT Development)
  # The same targets straight from a build tree (CMAKE_PREFIX_PATH=<build>).
  export(EXPORT ${component}Targets NAMESPACE ${P_NAMESPACE}:: FILE ${PROJECT_BINARY_DIR}/${component}Targets.cmake)

  tensogram_private_dependencies(${P_TARGET}_static deps requires_private libs_private)
  set_property(GLOBAL PROPERTY TENSOGRAM_DEPENDENCIES_${component} "${deps}")

  set(TENSOGRAM_PC_NAME ${P_PC_NAME})
  set(TENSOGRAM_PC_DESCRIPTION "${P_DESCRIPTION}")
  set(TENSOGRAM_PC_REQUIRES "${P_PC_REQUIRES}")
  set(TENSOGRAM_PC_REQUIRES_PRIVATE "${requires_private}")
  set(TENSOGRAM_PC_LIBS "-l${P_LIB_NAME}")
  set(TENSOGRAM_PC_LIBS_PRIVATE "${libs_private}")
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/tensogram.pc.in ${PROJECT_BINARY_DIR}/${P_PC_NAME}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${P_PC_NAME}.pc
    DESTINATION ${TENSOGRAM_INSTALL_PKGCONFIGDIR}
    COMPONENT Development)
endfunction()

# ---- the products -------------------------------------------------------------
tensogram_install_product(tensogram TARGET tensogram NAMESPACE tensogram EXPORT_NAME tensogram
  PC_NAME tensogram LIB_NAME tensogram PC_REQUIRES nlohmann_json
  DESCRIPTION "${PROJECT_DESCRIPTION} (wire format v3)")
set(TENSOGRAM_COMPONENTS "")
if(TARGET tensogram_importers)
  tensogram_install_product(importers TARGET tensogram_importers NAMESPACE tensogram EXPORT_NAME importers
    PC_NAME tensogram-importers LIB_NAME tensogram_importers PC_REQUIRES tensogram
    DESCRIPTION "GRIB (ecCodes) and NetCDF (netCDF-C) to and from Tensogram")
  list(APPEND TENSOGRAM_COMPONENTS importers)
endif()
tensogram_install_product(metatensor TARGET metatensor NAMESPACE metatensor EXPORT_NAME metatensor
  PC_NAME metatensor LIB_NAME metatensor PC_REQUIRES tensogram
  DESCRIPTION "Metatensor: schema-driven records, strings and ragged tensors in safetensors files")
tensogram_install_product(streaming TARGET metatensor_streaming NAMESPACE metatensor EXPORT_NAME streaming
  PC_NAME metatensor-streaming LIB_NAME metatensor_streaming PC_REQUIRES metatensor
  DESCRIPTION "Metatensor streaming over QUIC and HTTP range requests")
list(APPEND TENSOGRAM_COMPONENTS metatensor streaming)

# The Fortran module (fortran/, TENSOGRAM_BUILD_FORTRAN): the static
# libtensogram_f.a over the shared libtensogram, tensogram.mod in include/
# (as the reference installs it; .mod files are specific to the compiler
# and its version), component `fortran` -> tensogram::fortran, and
# tensogram-fortran.pc.
if(TARGET tensogram_f)
  install(TARGETS tensogram_f EXPORT fortranTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
  install(EXPORT fortranTargets NAMESPACE tensogram:: FILE fortranTargets.cmake
    DESTINATION ${TENSOGRAM_INSTALL_CMAKEDIR} COMPONENT Development)
  export(EXPORT fortranTargets NAMESPACE tensogram:: FILE ${PROJECT_BINARY_DIR}/fortranTargets.cmake)
  get_target_property(_tensogram_mod_dir tensogram_f Fortran_MODULE_DIRECTORY)
  install(DIRECTORY ${_tensogram_mod_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT Development FILES_MATCHING PATTERN "*.mod")
  set(TENSOGRAM_PC_NAME tensogram-fortran)
  set(TENSOGRAM_PC_DESCRIPTION "Fortran module tensogram over the Tensogram C API")
  set(TENSOGRAM_PC_REQUIRES tensogram)
  set(TENSOGRAM_PC_REQUIRES_PRIVATE "")
  set(TENSOGRAM_PC_LIBS "-ltensogram_f")
  set(TENSOGRAM_PC_LIBS_PRIVATE "")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/tensogram.pc.in ${PROJECT_BINARY_DIR}/tensogram-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/tensogram-fortran.pc
    DESTINATION ${TENSOGRAM_INSTALL_PKGCONFIGDIR} COMPONENT Development)
  set_property(GLOBAL PROPERTY TENSOGRAM_DEPENDENCIES_fortran "")
  list(APPEND TENSOGRAM_COMPONENTS fortran)
endif()

# Every public header, keeping the tree: <tensogram.hpp> includes
# "tensogram/<layer>/<name>.hpp" relative to include/.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT Development
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")

# The CLIs are written in tools/ and may be switched off
# (TENSOGRAM_BUILD_TOOLS=OFF), hence the guards.
if(TARGET tensogram_cli)
  # Should the CLI link a shared library, find it relative to bin/ so a
  # relocated or staged install runs without LD_LIBRARY_PATH.
  set_target_properties(tensogram_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS tensogram_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
  # Bash completion, generated from the CLI definition (`tensogram completion
  # bash`, target `cli-docs`); bash-completion loads it on demand from here.
  install(FILES ${PROJECT_SOURCE_DIR}/tools/tensogram/completion/tensogram.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
    RENAME tensogram
    COMPONENT Runtime)
endif()
if(TARGET metatensor_cli)
  install(TARGETS metatensor_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
endif()

# ---- CMake package config -------------------------------------------------------
get_property(TENSOGRAM_CONFIG_DEPENDENCIES GLOBAL PROPERTY TENSOGRAM_DEPENDENCIES_tensogram)
set(TENSOGRAM_COMPONENT_DEPENDENCIES "")
foreach(component IN LISTS TENSOGRAM_COMPONENTS)
  get_property(deps GLOBAL PROPERTY TENSOGRAM_DEPENDENCIES_${component})
  string(APPEND TENSOGRAM_COMPONENT_DEPENDENCIES "set(_tensogram_deps_${component} [==[\n${deps}]==])\n")
endforeach()

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/tensogramConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tensogramConfig.cmake
  INSTALL_DESTINATION ${TENSOGRAM_INSTALL_CMAKEDIR})

# Before 1.0 every minor release may break the API, which SameMajorVersion
# cannot express; it is still the contract we intend from 1.0 on.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/tensogramConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)

install(FILES
  ${PROJECT_BINARY_DIR}/tensogramConfig.cmake
  ${PROJECT_BINARY_DIR}/tensogramConfigVersion.cmake
  DESTINATION ${TENSOGRAM_INSTALL_CMAKEDIR}
  COMPONENT Development)
