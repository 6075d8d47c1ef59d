#include "tenancy/names.h"

#include <gtest/gtest.h>

#include <string>

namespace septa::tenancy {
namespace {

TEST(Names, TenantAndVirtualClusterNamesAreDns1123LabelsOfAtMost40) {
  for (auto* validate : {&ValidateTenantName, &ValidateVirtualClusterName}) {
    EXPECT_TRUE(validate("name", "a").ok());
    EXPECT_TRUE(validate("name", "train-7").ok());
    EXPECT_TRUE(validate("name", std::string(40, 'a')).ok());
    for (const std::string& bad : {std::string(), std::string(41, 'a'), std::string("Train"), std::string("a-"),
                                   std::string("-a"), std::string("a_b"), std::string("a.b"), std::string("a\0b", 3)}) {
      Status st = validate("name", bad);
      ASSERT_FALSE(st.ok()) << bad;
      EXPECT_EQ(st.code(), Code::kInvalidArgument);
      ASSERT_EQ(st.violations().size(), 1u);
      EXPECT_EQ(st.violations()[0].field, "name");
    }
  }
  EXPECT_EQ(ValidateVirtualClusterName("name", std::string(41, 'a')).message(),
            "name: must be at most 40 characters, got 41");
  EXPECT_EQ(ValidateVirtualClusterName("name", "").message(), "name: is required");
}

TEST(Names, DisplayNamesAreOneLineOfAtMost200Bytes) {
  EXPECT_TRUE(ValidateDisplayName("display_name", "").ok());
  EXPECT_TRUE(ValidateDisplayName("display_name", "Équipe Ω").ok());
  EXPECT_TRUE(ValidateDisplayName("display_name", std::string(200, 'x')).ok());
  for (const std::string& bad : {std::string(201, 'x'), std::string("\xff\xfe"), std::string("two\nlines")}) {
    Status st = ValidateDisplayName("display_name", bad);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.violations()[0].field, "display_name");
  }
}

}  // namespace
}  // namespace septa::tenancy
