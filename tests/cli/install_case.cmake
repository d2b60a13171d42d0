# Installs the `cli` component of a build tree into PREFIX and runs PREFIX/bin/gpubudget --help.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --component cli --prefix ${PREFIX} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${PREFIX}/bin/gpubudget --help OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PREFIX}/bin/gpubudget --help exited with ${rc}")
endif()
string(REGEX MATCH "^usage: gpubudget MODEL" first "${out}")
message("installed gpubudget runs: ${first}")
