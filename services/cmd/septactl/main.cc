// septactl: the admin CLI over septad's gRPC API. The commands live in
// services/cli; this shell hands over argv, the two environment values and stdin.
#include <cstdlib>
#include <iostream>

#include "services/cli/run.h"

int main(int argc, char** argv) {
  septa::cli::Environment env;
  if (const char* home = std::getenv("HOME")) env.home = home;
  if (const char* token = std::getenv("SEPTA_TOKEN")) env.septa_token = token;
  env.in = &std::cin;
  return septa::cli::RunSeptactl({argv + 1, argv + argc}, env, std::cout, std::cerr);
}
