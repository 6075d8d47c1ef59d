# -DSEPTA_SANITIZE=address: AddressSanitizer + UndefinedBehaviorSanitizer, and
# libFuzzer's coverage (fuzzer-no-link) so the fuzzers in fuzz/ link against
# the same objects the tests use: one clang build serves both.
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
  set(septa_sanitizer_compile_flags -fsanitize=fuzzer-no-link)
elseif(SEPTA_SANITIZE STREQUAL "thread")
  set(septa_sanitizer_flags -fsanitize=thread)
  set(septa_sanitizer_compile_flags "")
else()
  message(FATAL_ERROR "SEPTA_SANITIZE must be address or thread, not '${SEPTA_SANITIZE}'")
endif()

# Lean for CI time: -O0 and line tables only (enough for symbolized stacks).
# Instrumented optimisation was most of the compile time: Boost.Beast's
# connection.cc took 59 s at -O1 under ASan+UBSan and 23 s at -O0, while the
# tests, which mostly wait on sockets and PostgreSQL, barely slow down.
# NDEBUG stays undefined so assert()s are checked too.
foreach(lang C CXX)
  set(CMAKE_${lang}_FLAGS_RELWITHDEBINFO "-O0 -gline-tables-only" CACHE STRING "" FORCE)
endforeach()
add_compile_options(${septa_sanitizer_flags} ${septa_sanitizer_compile_flags} -fno-omit-frame-pointer)
add_link_options(${septa_sanitizer_flags})

# Folders a sanitizer build leaves out: the command-line binaries and
# benchmarks (services/cmd/). tests/CMakeLists.txt leaves out tests/e2e/, which
# drives those binaries.
list(APPEND SEPTA_EXCLUDE_DIRS cmd)
# gpu/ is pure, single-threaded computation: ThreadSanitizer has nothing to
# find there, and ASan+UBSan run its tests already.
if(SEPTA_SANITIZE STREQUAL "thread")
  list(APPEND SEPTA_EXCLUDE_DIRS tests/unit/gpu)
endif()

# The runtime options and suppression files, compiled into every test binary,
# fuzzer and septa-testdb (septa_test, septa_fuzzer and tests/support link
# septa_sanitizer_options), so they apply however the binary is run; the
# *SAN_OPTIONS environment variables still override them.
add_library(septa_sanitizer_options OBJECT ${PROJECT_SOURCE_DIR}/sanitizers/default_options.cc)
target_compile_definitions(septa_sanitizer_options PRIVATE SEPTA_SANITIZERS_DIR="${PROJECT_SOURCE_DIR}/sanitizers")
