# Runs `${CLI} ${ARGS}` (ARGS: space-separated) and writes its standard output
# to ${OUT}. Used by the `cli-docs` target: a CMake script, so that no shell
# redirection is needed.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${CLI} ${args} OUTPUT_FILE ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CLI} ${ARGS} failed (${rc})")
endif()
