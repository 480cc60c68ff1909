# The layers of libtensogram, bottom to top (docs/architecture.md). Each layer
# is an OBJECT library in its own folder (src/<layer>/CMakeLists.txt) linked to
# the layer below it, and sees only the public headers of its own and the
# lower layers: every layer compiles against a staging include directory of
# its own (build/layer-include/<layer>/) holding links to just its headers, so
# an #include against the layer order is a "No such file" compile error
# (tests/layering proves it). libtensogram (shared and static) is the union
# of the layers' objects; libmetatensor and libtensogram_importers sit on top.
#
# Private headers under src/ are included by their path from the project root
# ("src/<layer>/..."); tests/layering/check_includes.py holds those to the
# same order.

set(TENSOGRAM_LAYERS core cbor codecs format message io doctor capi)

# tensogram_add_layer(<layer>
#   SOURCES <file>...          sources relative to the calling folder
#   HEADERS <path>...          public header dirs/files relative to include/
#   [LINK <lib>...]            private third-party dependencies
#   [PUBLIC_LINK <lib>...]     third-party dependencies its headers need
#   [INCLUDES <dir>...])       private include directories (third party)
# Defines target tensogram_<layer> linked (PUBLIC) to the layer below.
function(tensogram_add_layer layer)
  cmake_parse_arguments(L "" "" "SOURCES;HEADERS;LINK;PUBLIC_LINK;INCLUDES" ${ARGN})
  list(FIND TENSOGRAM_LAYERS ${layer} rank)
  if(rank LESS 0)
    message(FATAL_ERROR "tensogram_add_layer: ${layer} is not in TENSOGRAM_LAYERS")
  endif()
  set(target tensogram_${layer})
  list(TRANSFORM L_SOURCES PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/")
  add_library(${target} OBJECT ${L_SOURCES})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)

  # The staging include directory: links to this layer's headers only.
  set(stage ${PROJECT_BINARY_DIR}/layer-include/${layer})
  file(REMOVE_RECURSE ${stage})
  foreach(header IN LISTS L_HEADERS)
    get_filename_component(parent ${stage}/${header} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/${header} ${stage}/${header} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${stage}>
                             PRIVATE ${PROJECT_SOURCE_DIR} ${L_INCLUDES})
  target_compile_features(${target} PUBLIC cxx_std_20)

  if(rank GREATER 0)
    math(EXPR below "${rank} - 1")
    list(GET TENSOGRAM_LAYERS ${below} lower)
    target_link_libraries(${target} PUBLIC tensogram_${lower})
  endif()
  target_link_libraries(${target} PRIVATE tensogram_warnings ${L_LINK} PUBLIC ${L_PUBLIC_LINK})

  # What the assembled libraries need: every layer's objects, every layer's
  # third-party libraries, and (for the fuzz build) the source list.
  set_property(GLOBAL APPEND PROPERTY TENSOGRAM_LAYER_LINK ${L_LINK})
  set_property(GLOBAL APPEND PROPERTY TENSOGRAM_LAYER_PUBLIC_LINK ${L_PUBLIC_LINK})
  set_property(GLOBAL APPEND PROPERTY TENSOGRAM_LAYER_INCLUDES ${L_INCLUDES})
  set_property(GLOBAL APPEND PROPERTY TENSOGRAM_LAYER_SOURCES ${L_SOURCES})
endfunction()

# tensogram_add_product(<name> OBJECTS <object-lib>... [LINK ...] [PUBLIC_LINK ...])
# Packages object libraries as <name> (shared, with SONAME) and
# <name>_static (static, same file name), with aliases <ns>::<alias> and
# <ns>::<alias>_static. PUBLIC include directory: include/.
function(tensogram_add_product name)
  cmake_parse_arguments(P "" "NAMESPACE;ALIAS" "OBJECTS;LINK;PUBLIC_LINK;SHARED_LINK;STATIC_LINK" ${ARGN})
  set(objects "")
  foreach(lib IN LISTS P_OBJECTS)
    list(APPEND objects $<TARGET_OBJECTS:${lib}>)
  endforeach()
  foreach(kind IN ITEMS shared static)
    if(kind STREQUAL "shared")
      set(target ${name})
      add_library(${target} SHARED ${objects})
      set_target_properties(${target} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
      set(alias ${P_NAMESPACE}::${P_ALIAS})
      set(extra ${P_SHARED_LINK})
    else()
      set(target ${name}_static)
      add_library(${target} STATIC ${objects})
      set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name})
      set(alias ${P_NAMESPACE}::${P_ALIAS}_static)
      set(extra ${P_STATIC_LINK})
    endif()
    target_include_directories(${target} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_compile_features(${target} PUBLIC cxx_std_20)
    target_link_libraries(${target} PRIVATE ${P_LINK} PUBLIC ${P_PUBLIC_LINK} ${extra})
    add_library(${alias} ALIAS ${target})
  endforeach()
endfunction()
