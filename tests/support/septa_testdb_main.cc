// septa-testdb: the throwaway PostgreSQL of one test run, started exactly as
// septad starts its embedded server. CTest runs it as the fixture "postgres":
//   septa-testdb start <dir>   initdb (no fsync) + start, writes <dir>/url
//   septa-testdb stop <dir>    fast shutdown, then deletes <dir>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "services/store/embedded_postgres.h"
#include "tests/support/test_database.h"

namespace {

int Fail(const septa::Status& status) {
  std::fprintf(stderr, "septa-testdb: %s\n", status.ToString().c_str());
  return 1;
}

int Start(const std::filesystem::path& dir) {
  septa::store::EmbeddedPostgresOptions options;
  options.root = dir;
  options.durable = false;
  auto server = septa::store::EmbeddedPostgres::Start(options);
  if (!server.ok()) return Fail(server.status());
  std::ofstream(septa::test::UrlFileOf(dir)) << (*server)->url() << "\n";
  (*server)->Detach();
  std::printf("septa-testdb: PostgreSQL for this test run at %s\n", (*server)->url().c_str());
  return 0;
}

int Stop(const std::filesystem::path& dir) {
  const septa::Status stopped = septa::store::EmbeddedPostgres::StopServer(dir);
  if (!stopped.ok()) return Fail(stopped);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc == 3 ? argv[1] : "";
  if (command == "start") return Start(argv[2]);
  if (command == "stop") return Stop(argv[2]);
  std::fprintf(stderr, "usage: septa-testdb start|stop <dir>\n");
  return 2;
}
