#include "services/app/replica_id.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "services/base/file.h"

namespace septa::app {

namespace fs = std::filesystem;

namespace {

// The host name as a replica id may spell it (config.cc's ParseReplicaId),
// short enough to leave room for the suffix.
std::string HostName() {
  std::array<char, 256> host{};
  ::gethostname(host.data(), host.size() - 1);
  std::string out;
  for (const char* c = host.data(); *c != '\0' && out.size() < 100; ++c) {
    const bool plain = std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '_' || *c == '-';
    out += plain ? *c : '-';
  }
  return out.empty() ? "septad" : out;
}

Result<std::string> MadeId(RandomSource& random) {
  std::array<std::uint8_t, 4> bytes{};
  SEPTA_RETURN_IF_ERROR(random.Fill(bytes));
  std::string id = HostName() + "-";
  for (std::uint8_t b : bytes) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", b);
    id += hex.data();
  }
  return id;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

}  // namespace

Result<std::string> ResolveReplicaId(const std::string& configured, const std::string& data_dir, RandomSource& random) {
  if (!configured.empty()) return configured;
  const fs::path path = fs::path(data_dir) / "replica_id";
  if (fs::exists(path)) {
    auto text = base::ReadFile(path);
    if (!text.ok()) return InvalidField("replica_id", text.status().message());
    std::string id = Trimmed(*std::move(text));
    if (id.empty()) return InvalidField("replica_id", path.string() + " is empty: delete it or set replica_id");
    return id;
  }
  auto id = MadeId(random);
  SEPTA_RETURN_IF_ERROR(id);
  // Written aside and linked into place, which fails if the file exists:
  // of two septads starting at once on one data directory, both keep the
  // first one's id (and the replica lock lets only one of them run).
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << *id << "\n";
    if (!out.flush()) return Internal("cannot write " + tmp.string());
  }
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  std::error_code ec;
  fs::remove(tmp, ec);
  if (linked != 0 && link_errno == EEXIST) return ResolveReplicaId(configured, data_dir, random);
  if (linked != 0) return Internal("cannot create " + path.string() + ": " + std::strerror(link_errno));
  return id;
}

}  // namespace septa::app
