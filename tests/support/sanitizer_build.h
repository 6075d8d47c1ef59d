// Whether this test binary is the ASan+UBSan or the TSan build
// (cmake/Sanitizers.cmake, clang only), for the few tests whose subject that
// build changes: they skip there with the reason, and ctest reports them as
// skipped, not passed.
#pragma once

namespace septa::test {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizerBuild = true;
#else
inline constexpr bool kAddressSanitizerBuild = false;
#endif
#else
inline constexpr bool kAddressSanitizerBuild = false;
#endif

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizerBuild = true;
#else
inline constexpr bool kThreadSanitizerBuild = false;
#endif
#else
inline constexpr bool kThreadSanitizerBuild = false;
#endif

}  // namespace septa::test
