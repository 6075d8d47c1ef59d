# Adds every direct sub-folder of DIR that has a CMakeLists.txt, in name
# order, so a new library folder is picked up without editing its parent.
function(septa_add_subdirectories DIR)
  file(GLOB children RELATIVE ${DIR} ${DIR}/*)
  list(SORT children)
  foreach(child IN LISTS children)
    if(child STREQUAL "tests" OR child STREQUAL "common" OR child MATCHES "^build")
      continue()
    endif()
    # -DSEPTA_EXCLUDE_DIRS="gpu;kubesim" leaves folders of those names out
    # (handy while a folder is mid-change in a shared work tree); an entry
    # with a slash names one folder by its path, e.g. "tests/unit/gpu".
    file(RELATIVE_PATH path ${PROJECT_SOURCE_DIR} ${DIR}/${child})
    if(child IN_LIST SEPTA_EXCLUDE_DIRS OR path IN_LIST SEPTA_EXCLUDE_DIRS)
      continue()
    endif()
    if(IS_DIRECTORY ${DIR}/${child} AND EXISTS ${DIR}/${child}/CMakeLists.txt)
      add_subdirectory(${DIR}/${child})
    endif()
  endforeach()
endfunction()

# The test run's throwaway PostgreSQL lives here (tests/support/).
set(SEPTA_TEST_POSTGRES_DIR ${CMAKE_BINARY_DIR}/testdb)

# septa_test(NAME SOURCES... LIBS ... [LABELS ...] [TEST_PREFIX p] [POSTGRES]):
# one GoogleTest binary, registered with CTest test by test, each test named
# "<TEST_PREFIX><Suite>.<Test>". POSTGRES: the tests use TestDatabase
# (tests/support/test_database.h), so CTest starts the fixture "postgres" first.
function(septa_test name)
  cmake_parse_arguments(T "POSTGRES" "TEST_PREFIX" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main)
  if(TARGET septa_sanitizer_options)
    target_link_libraries(${name} PRIVATE septa_sanitizer_options)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  set(properties "")
  if(T_LABELS)
    list(APPEND properties LABELS "${T_LABELS}")
  endif()
  if(T_POSTGRES)
    target_link_libraries(${name} PRIVATE septa_test_support)
    list(APPEND properties FIXTURES_REQUIRED postgres)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${T_TEST_PREFIX}" PROPERTIES ${properties})
endfunction()

# septa_run_first(): the tests of the calling folder start before the others.
# CTest -j starts tests in descending COST, and on a fresh clone it has no
# timings of its own yet (Testing/Temporary/CTestCostData.txt, which it
# prefers once a run wrote it), so it would start them in definition order:
# the end-to-end tests, which take half the stage's test-seconds (the
# longest a minute), came last and ran one by one at the end.
function(septa_run_first)
  get_directory_property(tests TESTS)
  if(tests)
    set_tests_properties(${tests} PROPERTIES COST 1000)
  endif()
endfunction()
