// Whether this test binary is the ASan+UBSan build (cmake/Sanitizers.cmake,
// clang only), for the few tests whose subject that build changes: they skip
// there with the reason, and ctest reports them as skipped, not passed.
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

}  // namespace septa::test
