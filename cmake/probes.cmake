# cmake/probes.cmake — CUDA runtime probes (issue 4).
#
# Include from the top-level CMakeLists.txt after `add_library(gpubudget INTERFACE)` and the
# `catch2_main` library exist, and only when testing is enabled:
#     include(cmake/probes.cmake)
#
# Always: the fake-device Catch2 tests (no CUDA needed), CTest name `probe.fake_device`.
# With the CUDA toolkit: the probe program `gpubudget_probe` (host C++ linked to CUDA::cudart
# and CUDA::cublas, plus cuDNN when found) and CTest `probe.device`, which is skipped (exit 77)
# on machines without a GPU or driver.

set(_gpubudget_probe_root "${CMAKE_CURRENT_LIST_DIR}/..")

add_executable(gpubudget_probe_fake_tests
  "${_gpubudget_probe_root}/tests/probe/allocation_test.cpp"
  "${_gpubudget_probe_root}/tests/probe/budget_check_test.cpp"
  "${_gpubudget_probe_root}/tests/probe/context_report_test.cpp"
  "${_gpubudget_probe_root}/tests/probe/from_budget_test.cpp")
target_link_libraries(gpubudget_probe_fake_tests PRIVATE gpubudget catch2_main)
target_compile_features(gpubudget_probe_fake_tests PRIVATE cxx_std_20)
add_test(NAME probe.fake_device COMMAND gpubudget_probe_fake_tests)
# Warnings come from the including project's global flags; a project that sets them per target
# can list them in GPUBUDGET_WARNING_FLAGS instead.
if(DEFINED GPUBUDGET_WARNING_FLAGS)
  target_compile_options(gpubudget_probe_fake_tests PRIVATE ${GPUBUDGET_WARNING_FLAGS})
endif()

find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  message(STATUS "gpubudget probes: CUDA toolkit not found; building the fake-device tests only")
  return()
endif()

add_executable(gpubudget_probe "${_gpubudget_probe_root}/benchmarks/probe/probe_main.cpp")
target_link_libraries(gpubudget_probe PRIVATE gpubudget CUDA::cudart CUDA::cublas)
target_compile_features(gpubudget_probe PRIVATE cxx_std_20)
if(DEFINED GPUBUDGET_WARNING_FLAGS)
  target_compile_options(gpubudget_probe PRIVATE ${GPUBUDGET_WARNING_FLAGS})
endif()

# cuDNN ships outside the toolkit's CMake package: look next to the toolkit, then system paths.
find_path(GPUBUDGET_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} "${CUDAToolkit_LIBRARY_ROOT}/include")
find_library(GPUBUDGET_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
if(GPUBUDGET_CUDNN_INCLUDE_DIR AND GPUBUDGET_CUDNN_LIBRARY)
  target_include_directories(gpubudget_probe SYSTEM PRIVATE "${GPUBUDGET_CUDNN_INCLUDE_DIR}")
  target_link_libraries(gpubudget_probe PRIVATE "${GPUBUDGET_CUDNN_LIBRARY}")
  target_compile_definitions(gpubudget_probe PRIVATE GPUBUDGET_PROBE_HAVE_CUDNN=1)
  message(STATUS "gpubudget probes: CUDA ${CUDAToolkit_VERSION}, cuDNN ${GPUBUDGET_CUDNN_LIBRARY}")
else()
  message(STATUS "gpubudget probes: CUDA ${CUDAToolkit_VERSION}, cuDNN not found (conv workspace probe off)")
endif()

add_test(NAME probe.device COMMAND gpubudget_probe)
set_tests_properties(probe.device PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
