# tensogram_gtest_suites(<target> [TEST_PREFIX <prefix>] [PROPERTIES <name> <value>...]):
# registers a GoogleTest program with CTest as one test per test suite
# (`<prefix><Suite>`, run as `<program> --gtest_filter=<Suite>.*`) where
# CMake's gtest_discover_tests registers one per test case.
#
# Why: every CTest test is a process, and an ASan+UBSan test program takes
# ~0.25 s of CPU to start and to check for leaks at exit even when its test
# does nothing; ~1400 test cases in ~300 suites made that several minutes of
# the sanitizer run. A failing suite's output names the failing cases.
#
# As gtest_discover_tests does, the suites are listed after each build (the
# program's --gtest_list_tests, POST_BUILD) into a file that CTest includes
# when it runs; <prefix> and PROPERTIES apply to every suite.
#
# Script mode (the POST_BUILD step): cmake -D EXE=... -D OUT=... -P this file.
if(CMAKE_SCRIPT_MODE_FILE)
  execute_process(COMMAND "${EXE}" --gtest_list_tests
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXE} --gtest_list_tests failed (${rc}):\n${listing}")
  endif()
  # Suite lines start in column 0 and end with '.' (a typed or parameterised
  # suite may carry a "  # TypeParam = ..." comment); case lines are indented.
  string(REPLACE "\n" ";" lines "${listing}")
  set(suites "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([^ #][^ ]*)\\.( *#.*)?$")
      list(APPEND suites "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  file(WRITE "${OUT}.new" "set(suites [==[${suites}]==])\n")
  file(RENAME "${OUT}.new" "${OUT}")
  return()
endif()

set(TENSOGRAM_GTEST_SUITES_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

function(tensogram_gtest_suites target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TEST_PREFIX" "PROPERTIES")
  set(list_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D EXE=$<TARGET_FILE:${target}> -D OUT=${list_file}
            -P ${TENSOGRAM_GTEST_SUITES_SCRIPT}
    BYPRODUCTS ${list_file}
    VERBATIM)
  # The properties, each argument as a bracket argument so that values that
  # are lists (LABELS "a;b") stay one argument.
  set(props "")
  foreach(p IN LISTS arg_PROPERTIES)
    string(APPEND props " [==[${p}]==]")
  endforeach()
  file(GENERATE OUTPUT ${include_file} CONTENT
"if(EXISTS [==[${list_file}]==])
  include([==[${list_file}]==])
  foreach(suite IN LISTS suites)
    add_test(\"${arg_TEST_PREFIX}\${suite}\" [==[$<TARGET_FILE:${target}>]==] --gtest_filter=\${suite}.*)
    set_tests_properties(\"${arg_TEST_PREFIX}\${suite}\" PROPERTIES
                         WORKING_DIRECTORY [==[${CMAKE_CURRENT_BINARY_DIR}]==]${props})
  endforeach()
else()
  add_test([==[${target}_NOT_BUILT]==] [==[${target}_NOT_BUILT]==])
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
