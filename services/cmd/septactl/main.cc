// septactl: the admin CLI over septad's gRPC API. The commands live in
// services/cli; this shell hands over argv, the environment and stdin.
#include <cstdlib>
#include <iostream>

#include "services/cli/run.h"

int main(int argc, char** argv) {
  septa::cli::Environment env;
  if (const char* home = std::getenv("HOME")) env.home = home;
  if (const char* token = std::getenv("SEPTA_TOKEN")) env.septa_token = token;
  env.in = &std::cin;
  env.variable = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  return septa::cli::RunSeptactl({argv + 1, argv + argc}, env, std::cout, std::cerr);
}
