// Default runtime options of the sanitizer builds (cmake/Sanitizers.cmake
// links this into every test binary and fuzzer). Each runtime reads only its
// own function; the environment (ASAN_OPTIONS, ...) overrides these.
#define SEPTA_SUPPRESSIONS(file) "suppressions=" SEPTA_SANITIZERS_DIR "/" file

extern "C" {

// Any report fails: UBSan is built with -fno-sanitize-recover=all too.
const char* __asan_default_options() { return "detect_leaks=1:check_initialization_order=1:strict_init_order=1"; }
const char* __lsan_default_options() { return SEPTA_SUPPRESSIONS("lsan.supp") ":print_suppressions=0"; }
const char* __ubsan_default_options() { return SEPTA_SUPPRESSIONS("ubsan.supp") ":print_stacktrace=1:halt_on_error=1"; }
const char* __tsan_default_options() {
  return SEPTA_SUPPRESSIONS("tsan.supp") ":halt_on_error=1:second_deadlock_stack=1:print_suppressions=0";
}

}  // extern "C"
