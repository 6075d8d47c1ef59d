// septa-openapi: writes api/openapi.yaml from the protos' route table.
//   septa-openapi                 prints it
//   septa-openapi --out FILE      writes it to FILE (scripts/gen_openapi.sh)
//   septa-openapi --check FILE    exits 1 when FILE differs (CTest openapi_up_to_date)
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "services/apiv1/openapi.h"
#include "services/base/file.h"

namespace {

// The 1-based number of the first line where `a` and `b` differ.
int FirstDifferentLine(std::string_view a, std::string_view b) {
  int line = 1;
  for (std::size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i) line += a[i] == '\n';
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc == 3 ? argv[1] : "";
  if (argc != 1 && mode != "--out" && mode != "--check") {
    std::cerr << "usage: septa-openapi [--out FILE | --check FILE]\n";
    return 2;
  }
  auto yaml = septa::apiv1::OpenApiYaml();
  if (!yaml.ok()) {
    std::cerr << "septa-openapi: " << yaml.status().ToString() << "\n";
    return 1;
  }
  if (argc == 1) {
    std::cout << *yaml;
    return 0;
  }
  const std::string path = argv[2];
  if (mode == "--out") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << *yaml;
    out.close();
    if (!out) {
      std::cerr << "septa-openapi: cannot write " << path << "\n";
      return 1;
    }
    return 0;
  }
  auto committed = septa::base::ReadFile(path);
  if (!committed.ok()) {
    std::cerr << "septa-openapi: " << committed.status().ToString() << "\n";
    return 1;
  }
  if (*committed != *yaml) {
    std::cerr << path << " is out of date with api/proto (first difference at line "
              << FirstDifferentLine(*committed, *yaml) << "): run scripts/gen_openapi.sh and commit the result\n";
    return 1;
  }
  std::cout << path << " matches the protos\n";
  return 0;
}
