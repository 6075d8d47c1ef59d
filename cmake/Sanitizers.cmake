# -DSEPTA_SANITIZE=address: AddressSanitizer + UndefinedBehaviorSanitizer, and
# libFuzzer's coverage (fuzzer-no-link) in the libraries a fuzzer links
# (septa_fuzz_coverage below), so the fuzzers in fuzz/ link against the same
# objects the tests use: one clang build serves both.
# -DSEPTA_SANITIZE=thread: ThreadSanitizer.
# Both need clang (CMAKE_CXX_COMPILER=clang++) and build only what the unit and
# integration tests need (no benchmarks, no command-line binaries, no e2e
# tests); deploy/dev/test.sh builds them in build-asan/ and build-tsan/.
set(SEPTA_SANITIZE "" CACHE STRING "Sanitizer build: address (ASan+UBSan+fuzzers) or thread (TSan); empty for none")
set_property(CACHE SEPTA_SANITIZE PROPERTY STRINGS "" address thread)

if(SEPTA_SANITIZE STREQUAL "")
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "SEPTA_SANITIZE=${SEPTA_SANITIZE} needs clang: -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
endif()

if(SEPTA_SANITIZE STREQUAL "address")
  # -fno-sanitize-recover: undefined behaviour fails the test instead of
  # printing a line nobody reads.
  set(septa_sanitizer_flags -fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(SEPTA_SANITIZE STREQUAL "thread")
  set(septa_sanitizer_flags -fsanitize=thread)
else()
  message(FATAL_ERROR "SEPTA_SANITIZE must be address or thread, not '${SEPTA_SANITIZE}'")
endif()

# Lean for CI time: line tables only (enough for symbolized stacks), and
# ASan at -O0: instrumented optimisation was most of its compile time
# (Boost.Beast's connection.cc: 59 s at -O1 under ASan+UBSan, 23 s at -O0)
# while its tests, which mostly wait on sockets and PostgreSQL, went from
# 150 s to 255 s. TSan stays at -O1: at -O0 the test binaries keep
# out-of-line, instrumented copies of std::string's members, gRPC's calls
# bind to them, and TSan reports races inside gRPC it cannot see the locks
# of (seen on the septactl tests against a stopped server).
# NDEBUG stays undefined so assert()s are checked too.
if(SEPTA_SANITIZE STREQUAL "address")
  set(septa_sanitizer_optimization -O0)
else()
  set(septa_sanitizer_optimization -O1)
endif()
foreach(lang C CXX)
  set(CMAKE_${lang}_FLAGS_RELWITHDEBINFO "${septa_sanitizer_optimization} -gline-tables-only" CACHE STRING "" FORCE)
endforeach()
add_compile_options(${septa_sanitizer_flags} -fno-omit-frame-pointer)
add_link_options(${septa_sanitizer_flags})

# Folders a sanitizer build leaves out: the command-line binaries and
# benchmarks (services/cmd/). tests/CMakeLists.txt leaves out tests/e2e/, which
# drives those binaries.
list(APPEND SEPTA_EXCLUDE_DIRS cmd)
# gpu/, tenancy/ and common/ are pure, single-threaded computation (no
# threads: scripts/check_layers.sh), and so are their tests: ThreadSanitizer
# has nothing to find there, and ASan+UBSan run those tests already.
if(SEPTA_SANITIZE STREQUAL "thread")
  list(APPEND SEPTA_EXCLUDE_DIRS tests/unit/gpu tests/unit/tenancy tests/unit/common)
endif()

# The runtime options and suppression files, compiled into every test binary,
# fuzzer and septa-testdb (septa_test, septa_fuzzer and tests/support link
# septa_sanitizer_options), so they apply however the binary is run; the
# *SAN_OPTIONS environment variables still override them.
add_library(septa_sanitizer_options OBJECT ${PROJECT_SOURCE_DIR}/sanitizers/default_options.cc)
target_compile_definitions(septa_sanitizer_options PRIVATE SEPTA_SANITIZERS_DIR="${PROJECT_SOURCE_DIR}/sanitizers")

# septa_fuzz_coverage(TARGET): libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link) for TARGET and every library of this project it
# links, directly or not, once all targets are defined (fuzz/ is configured
# before services/). Only code a fuzzer can reach gets it: the instrumentation
# cost a third of an ASan compile (a unity unit of services/kube/: 38.8 s user
# with it, 26.9 s without), and neither the tests' own code nor a library no
# fuzzer links has any use for it. Test binaries that link an instrumented library
# run as before: the sanitizer runtime defines the coverage callbacks.
function(septa_fuzz_coverage target)
  # EVAL: a deferred call's arguments are read when it runs, where ${target} is unset.
  cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY [[${PROJECT_SOURCE_DIR}]] CALL _septa_fuzz_coverage_now [[${target}]])")
endfunction()

function(_septa_fuzz_coverage_now target)
  get_property(covered GLOBAL PROPERTY SEPTA_FUZZ_COVERED)
  if(target IN_LIST covered)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY SEPTA_FUZZ_COVERED ${target})
  get_target_property(imported ${target} IMPORTED)
  get_target_property(type ${target} TYPE)
  if(imported OR type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  get_target_property(links ${target} LINK_LIBRARIES)
  foreach(link IN LISTS links)
    if(TARGET ${link})
      _septa_fuzz_coverage_now(${link})
    endif()
  endforeach()
endfunction()
