// septa-vaultsim: runs the Vault-API-compatible TEST server until
// SIGINT/SIGTERM (docs/vaultsim.md). Not a Vault: for tests and development.
//   septa-vaultsim --listen 127.0.0.1:0 --root-token-file ./root-token
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "services/base/file.h"
#include "services/vaultsim/vaultsim.h"

namespace {

// Written whole under a temporary name, then renamed: a script waiting for the file never reads half of it.
bool WriteAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"septa-vaultsim: a Vault-API-compatible test server (tests and development only; not a Vault)"};
  septa::vaultsim::VaultSimOptions options;
  std::string root_token_file, ca_out;
  app.add_option("--listen", options.listen, "address, host:port (port 0: any free port)")->capture_default_str();
  app.add_option("--root-token-file", root_token_file,
                 "read the root token from this file if it exists, else write a random one to it");
  app.add_flag("--tls", options.tls, "serve HTTPS with a fresh CA");
  app.add_option("--ca-out", ca_out, "with --tls: write the CA certificate (PEM) here");
  app.add_flag("--review-kubernetes-logins", options.review_kubernetes_logins,
               "check Kubernetes logins with a TokenReview at the auth method's kubernetes_host, as Vault does "
               "(without it, a JWT's claims are believed)");
  CLI11_PARSE(app, argc, argv);

  bool write_token = false;
  if (!root_token_file.empty()) {
    auto existing = septa::base::ReadFile(root_token_file);
    if (existing.ok()) {
      options.root_token = *existing;
      while (!options.root_token.empty() && std::isspace(static_cast<unsigned char>(options.root_token.back()))) {
        options.root_token.pop_back();
      }
    }
    write_token = options.root_token.empty();
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts

  septa::vaultsim::VaultSim sim(options);
  if (auto st = sim.Start(); !st.ok()) {
    std::cerr << "septa-vaultsim: " << st.ToString() << "\n";
    return 1;
  }
  if (write_token && !WriteAtomically(root_token_file, sim.root_token() + "\n")) {
    std::cerr << "septa-vaultsim: cannot write " << root_token_file << "\n";
    return 1;
  }
  if (options.tls && !ca_out.empty() && !WriteAtomically(ca_out, sim.ca_certificate())) {
    std::cerr << "septa-vaultsim: cannot write " << ca_out << "\n";
    return 1;
  }
  std::cout << "septa-vaultsim: serving " << sim.address() << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  sim.Stop();
  return 0;
}
