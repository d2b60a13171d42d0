# Installs gpubudget into a scratch prefix, then configures, builds and runs a consumer that
# uses find_package(gpubudget CONFIG).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/lib -DCMAKE_CXX_COMPILER=${CXX}
                        -DGPUBUDGET_BUILD_TESTS=OFF -DGPUBUDGET_BUILD_EXAMPLES=OFF -DGPUBUDGET_BUILD_BENCHMARKS=OFF -DGPUBUDGET_BUILD_TOOLS=OFF
                        -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK_DIR}/lib COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/app -DCMAKE_CXX_COMPILER=${CXX}
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/app COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${WORK_DIR}/app/consumer COMMAND_ERROR_IS_FATAL ANY)
