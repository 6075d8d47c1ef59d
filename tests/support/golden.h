// Golden-file comparison for the rendering tests: `text` must equal the file
// at `path` byte for byte; with SEPTA_UPDATE_GOLDEN set in the environment
// the file is (re)written instead, so an intended change of the rendering
// is one run and a reviewed diff. Header only: it needs nothing but gtest,
// which every test links.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace septa::test {

// A test data file's bytes; empty when it cannot be read.
inline std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void ExpectGolden(const std::string& path, const std::string& text) {
  if (std::getenv("SEPTA_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  const std::string want = ReadTestFile(path);
  ASSERT_FALSE(want.empty()) << path << " is missing: run with SEPTA_UPDATE_GOLDEN=1 to write it";
  EXPECT_EQ(text, want) << path << " differs; if the change is intended, regenerate with SEPTA_UPDATE_GOLDEN=1";
}

}  // namespace septa::test
