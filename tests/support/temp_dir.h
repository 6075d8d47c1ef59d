// A fresh directory under /tmp for one test, removed with everything in it
// when the object goes.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace septa::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "septa-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `name` (its parent directories made as needed) and
  // returns the file's path.
  std::string Write(const std::string& name, const std::string& text, bool executable = false) const {
    const std::filesystem::path p = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    if (executable) ::chmod(p.c_str(), 0755);
    return p.string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace septa::test
