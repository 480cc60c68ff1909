# Install rules and the exported CMake / pkg-config packages.
#
# Included at the end of the top-level CMakeLists.txt (after tools/ has been
# added), so targets defined by subdirectories are visible here.
#
# Layout under the prefix:
#   include/tensogram.hpp, include/tensogram/**    public headers
#   lib/libtensogram.so*, lib/libtensogram.a       shared and static library
#   lib/cmake/tensogram/                           find_package(tensogram CONFIG)
#   lib/pkgconfig/tensogram.pc                     pkg-config --cflags --libs tensogram
#   bin/tensogram                                  the CLI (when built)
#   share/bash-completion/completions/tensogram    its bash completion

include(CMakePackageConfigHelpers)

set(TENSOGRAM_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tensogram"
    CACHE STRING "Where tensogramConfig.cmake is installed (relative to the prefix)")
set(TENSOGRAM_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where tensogram.pc is installed (relative to the prefix)")

# Both libraries go into one export set so one config file provides
# tensogram::tensogram and tensogram::tensogram_static.
install(TARGETS tensogram tensogram_static
  EXPORT tensogramTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Every public header, keeping the tree: <tensogram.hpp> includes
# "tensogram/<layer>/<name>.hpp" relative to include/.
# The importers' headers stay out: their library (tensogram_importers, with
# ecCodes and netCDF-C) is not part of the installed package yet; programs
# use it from the build tree, and the installed CLI and Python module carry
# it linked in. The metatensor headers (include/metatensor.hpp,
# include/metatensor/**) are installed; libmetatensor
# (src/metatensor/CMakeLists.txt) is not exported yet, and the installed
# `metatensor` CLI carries it linked in.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT Development
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h"
  PATTERN "importers" EXCLUDE)

# The CLI is written in tools/tensogram/ and may be switched off
# (TENSOGRAM_BUILD_TOOLS=OFF), hence the guard.
if(TARGET tensogram_cli)
  # Should the CLI link the shared library, find it relative to bin/ so a
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

# ---- CMake package ---------------------------------------------------------
install(EXPORT tensogramTargets
  NAMESPACE tensogram::
  FILE tensogramTargets.cmake
  DESTINATION ${TENSOGRAM_INSTALL_CMAKEDIR}
  COMPONENT Development)

# The same targets straight from a build tree (CMAKE_PREFIX_PATH=<build>),
# handy for trying a consumer without installing.
export(EXPORT tensogramTargets
  NAMESPACE tensogram::
  FILE ${PROJECT_BINARY_DIR}/tensogramTargets.cmake)

# ---- dependencies a consumer has to find again ------------------------------
# The static library's link interface names every private dependency
# (PkgConfig::XXHASH today; codec libraries as they land), and the exported
# targets file refers to them by those names. Derive from that list what
# tensogramConfig.cmake must re-create and what tensogram.pc lists, so a new
# dependency added in the top-level CMakeLists.txt needs no change here.
#
# pkg-config modules whose imported-target prefix differs from what
# pkg_check_modules recorded can be pinned here as PREFIX=module.
set(TENSOGRAM_PKGCONFIG_MODULES "XXHASH=libxxhash")

get_target_property(_tg_static_libs tensogram_static LINK_LIBRARIES)
set(_tg_pc_prefixes "")
set(_tg_packages "")
foreach(_tg_lib IN LISTS _tg_static_libs)
  string(REGEX MATCHALL "[A-Za-z0-9_.+-]+::[A-Za-z0-9_.+-]+" _tg_targets "${_tg_lib}")
  foreach(_tg_target IN LISTS _tg_targets)
    if(_tg_target MATCHES "^PkgConfig::(.+)$")
      list(APPEND _tg_pc_prefixes "${CMAKE_MATCH_1}")
    elseif(_tg_target MATCHES "^([^:]+)::")
      # find_package(<Pkg>) creates <Pkg>::<name> by convention (Threads,
      # ZLIB, zstd, nlohmann_json, ...).
      list(APPEND _tg_packages "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _tg_pc_prefixes)
list(REMOVE_DUPLICATES _tg_packages)

set(TENSOGRAM_CONFIG_DEPENDENCIES "")
set(TENSOGRAM_PC_REQUIRES_PRIVATE "")
set(TENSOGRAM_PC_LIBS_PRIVATE "")
foreach(_tg_pkg IN LISTS _tg_packages)
  if(_tg_pkg STREQUAL "nlohmann_json")
    continue()  # public, found unconditionally by the config file
  endif()
  string(APPEND TENSOGRAM_CONFIG_DEPENDENCIES "find_dependency(${_tg_pkg})\n")
  if(_tg_pkg STREQUAL "Threads")
    list(APPEND TENSOGRAM_PC_LIBS_PRIVATE "-pthread")
  endif()
endforeach()
foreach(_tg_prefix IN LISTS _tg_pc_prefixes)
  set(_tg_module "")
  foreach(_tg_pair IN LISTS TENSOGRAM_PKGCONFIG_MODULES)
    if(_tg_pair MATCHES "^${_tg_prefix}=(.+)$")
      set(_tg_module "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  if(_tg_module STREQUAL "" AND DEFINED __pkg_config_arguments_${_tg_prefix})
    # What pkg_check_modules(<prefix> ...) was asked for, minus its keywords.
    set(_tg_module ${__pkg_config_arguments_${_tg_prefix}})
    list(REMOVE_ITEM _tg_module REQUIRED QUIET NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH IMPORTED_TARGET GLOBAL)
  endif()
  if(_tg_module STREQUAL "")
    message(FATAL_ERROR "cmake/install.cmake: cannot tell which pkg-config module PkgConfig::${_tg_prefix} "
                        "comes from; add ${_tg_prefix}=<module> to TENSOGRAM_PKGCONFIG_MODULES")
  endif()
  string(APPEND TENSOGRAM_CONFIG_DEPENDENCIES "tensogram_find_pkgconfig(${_tg_prefix} ${_tg_module})\n")
  list(APPEND TENSOGRAM_PC_REQUIRES_PRIVATE ${_tg_module})
endforeach()
list(JOIN TENSOGRAM_PC_REQUIRES_PRIVATE ", " TENSOGRAM_PC_REQUIRES_PRIVATE)
list(JOIN TENSOGRAM_PC_LIBS_PRIVATE " " TENSOGRAM_PC_LIBS_PRIVATE)

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

# ---- pkg-config --------------------------------------------------------------
# The .pc file locates the prefix relative to its own directory
# (${pcfiledir}), so one file works for `make install`, DESTDIR packaging and
# `cmake --install --prefix <stage>` alike: the prefix chosen at configure
# time is never baked in.
if(IS_ABSOLUTE "${TENSOGRAM_INSTALL_PKGCONFIGDIR}")
  # An absolute .pc directory says nothing about the prefix: bake it in.
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
configure_file(${CMAKE_CURRENT_LIST_DIR}/tensogram.pc.in ${PROJECT_BINARY_DIR}/tensogram.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tensogram.pc
  DESTINATION ${TENSOGRAM_INSTALL_PKGCONFIGDIR}
  COMPONENT Development)
