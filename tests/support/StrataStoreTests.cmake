# Shared by tests/store and tests/crash: the test support library (model,
# generator, comparator, child processes, main with --pair/--root) and
# strata_add_pair_tests(), which registers a Catch2 test binary once per
# backend x journal pair.
include_guard(GLOBAL)

set(STRATA_TEST_SUPPORT_DIR ${CMAKE_CURRENT_LIST_DIR})

add_library(strata_test_support STATIC
  ${STRATA_TEST_SUPPORT_DIR}/child_process.cpp
  ${STRATA_TEST_SUPPORT_DIR}/store_compare.cpp
  ${STRATA_TEST_SUPPORT_DIR}/store_model.cpp
  ${STRATA_TEST_SUPPORT_DIR}/test_env.cpp
  ${STRATA_TEST_SUPPORT_DIR}/test_main.cpp
  ${STRATA_TEST_SUPPORT_DIR}/txn_gen.cpp)
target_include_directories(strata_test_support PUBLIC ${STRATA_TEST_SUPPORT_DIR})
target_link_libraries(strata_test_support PUBLIC strata_store Catch2::Catch2 Threads::Threads)
target_compile_definitions(strata_test_support PRIVATE
  STRATA_TEST_PLUGIN_DIR="${STRATA_PLUGIN_OUTPUT_DIR}")

# strata_test_pair_parts(PAIR BACKEND_VAR JOURNAL_VAR): "kv-leveldb+file" -> kv, file
function(strata_test_pair_parts pair backend_var journal_var)
  string(REPLACE "+" ";" parts ${pair})
  list(GET parts 0 b)
  list(GET parts 1 j)
  string(REGEX REPLACE "-.*$" "" b ${b})
  set(${backend_var} ${b} PARENT_SCOPE)
  set(${journal_var} ${j} PARENT_SCOPE)
endfunction()

# strata_add_pair_tests(TARGET t PREFIX "store/" [TIMEOUT s] [COST c] [LABELS l...])
# Registers each TEST_CASE of t once per available pair as
# "<PREFIX><pair>/<test name>", run with --pair <pair> --root <dir>. Tests
# tagged [journal] are not registered for journal-less pairs. xfs and btrfs
# pairs get a loop-mounted file system made by a ctest fixture (mounted
# before, unmounted and deleted after, also when tests fail); every store
# root is emptied after the last test (store_root.sh).
function(strata_add_pair_tests)
  cmake_parse_arguments(A "" "TARGET;PREFIX;TIMEOUT;COST" "LABELS" ${ARGN})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 600)
  endif()
  if(NOT A_COST)
    set(A_COST 0)
  endif()
  # Every pair the store engine is tested with.
  set(pairs
    kv-rocksdb+file kv-rocksdb+tmpfs kv-rocksdb+none
    kv-leveldb+file kv-leveldb+tmpfs kv-leveldb+none
    xfs+file xfs+tmpfs
    btrfs+file btrfs+tmpfs)
  set(store_root ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/store_root.sh)
  set(loop_dir ${CMAKE_CURRENT_BINARY_DIR}/loopfs)
  set(fixtures "")
  set(registered "")
  foreach(pair IN LISTS pairs)
    strata_test_pair_parts(${pair} backend journal)
    add_dependencies(${A_TARGET} strata_backend_${backend})
    set(spec "")
    if(journal STREQUAL "none")
      set(spec "~[journal]")
    else()
      add_dependencies(${A_TARGET} strata_journal_${journal})
    endif()

    # One fixture per store root: a loop-mounted file system for xfs and
    # btrfs, a build directory otherwise; emptied (and unmounted) after the
    # last test, also when tests failed or were killed.
    if(backend STREQUAL "xfs" OR backend STREQUAL "btrfs")
      set(root ${loop_dir}/${backend})
      set(fs_args ${backend} ${loop_dir}/${backend}.img)
      set(fixture ${A_TARGET}_root_${backend})
    else()
      set(root ${CMAKE_CURRENT_BINARY_DIR}/stores)
      set(fs_args "")
      set(fixture ${A_TARGET}_root_dir)
    endif()
    if(NOT fixture IN_LIST fixtures)
      list(APPEND fixtures ${fixture})
      add_test(NAME ${fixture}_setup COMMAND ${store_root} setup ${root} ${fs_args})
      add_test(NAME ${fixture}_cleanup COMMAND ${store_root} cleanup ${root} ${fs_args})
      set_tests_properties(${fixture}_setup PROPERTIES FIXTURES_SETUP ${fixture})
      set_tests_properties(${fixture}_cleanup PROPERTIES FIXTURES_CLEANUP ${fixture})
    endif()
    list(APPEND registered ${pair})
    catch_discover_tests(${A_TARGET}
      TEST_PREFIX "${A_PREFIX}${pair}/"
      TEST_SPEC ${spec}
      EXTRA_ARGS --pair ${pair} --root ${root}
      PROPERTIES FIXTURES_REQUIRED ${fixture} TIMEOUT ${A_TIMEOUT} COST ${A_COST}
        LABELS "${A_LABELS}")
  endforeach()
  message(STATUS "${A_TARGET}: backend x journal pairs: ${registered}")
endfunction()
