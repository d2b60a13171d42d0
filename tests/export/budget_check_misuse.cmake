# cmake -DMODULE=<gpubudget_budget_check.cmake> -DCASE=<case> -P budget_check_misuse.cmake:
# gpubudget_add_budget_check stops at configure time, naming the problem, before it writes anything.
include(${MODULE})
if(CASE STREQUAL "alloc_conf_without_model")
  gpubudget_add_budget_check(misuse HEADER x.hpp MODEL m DEVICE t4 BATCH 8 ALLOC_CONF "expandable_segments:True")
elseif(CASE STREQUAL "alloc_conf_quote")
  gpubudget_add_budget_check(misuse HEADER x.hpp MODEL m DEVICE t4 BATCH 8 ALLOCATOR_MODEL ALLOC_CONF "a\"b")
elseif(CASE STREQUAL "batch_zero")
  gpubudget_add_budget_check(misuse HEADER x.hpp MODEL m DEVICE t4 BATCH 0)
endif()
message(FATAL_ERROR "no diagnostic for ${CASE}")
