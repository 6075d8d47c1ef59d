#include "services/core/kubeconfig.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <string_view>

#include "services/base/base64.h"

namespace septa::core {
namespace {

// Whether YAML reads `s` back as this very string unquoted: letters,
// digits and a few punctuation marks that mean nothing inside a plain
// scalar, starting with a letter, not ending in ':' and not one
// of the words YAML 1.1 (which kubectl's parser follows) reads as a
// boolean or null. Numbers are left to the quoted form.
bool IsPlain(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s.front())) || s.back() == ':') return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '-' && c != '_' && c != '.' && c != '/' && c != ':' && c != '@' && c != '+' &&
        c != '=') {
      return false;
    }
  }
  if (s.size() > 5) return true;
  std::string lower(s);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}) {
    if (lower == word) return false;
  }
  return true;
}

// A JSON string is a YAML double-quoted scalar: the same escapes.
std::string Scalar(const std::string& s) {
  return IsPlain(s) ? s : nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string RenderKubeconfig(const Kubeconfig& k) {
  const std::string name = Scalar(k.name);
  const std::string user = Scalar(k.user + "@" + k.name);
  std::string out;
  out.reserve(4096);
  out += "apiVersion: v1\nkind: Config\nclusters:\n  - name: " + name +
         "\n    cluster:\n      server: " + Scalar(k.server) +
         "\n      certificate-authority-data: " + Scalar(base::Base64Encode(k.server_ca)) +
         "\nusers:\n  - name: " + user + "\n    user:\n";
  if (const auto* cert = std::get_if<KubeconfigClientCertificate>(&k.credential)) {
    out += "      client-certificate-data: " + Scalar(base::Base64Encode(cert->certificate_pem)) +
           "\n      client-key-data: " + Scalar(base::Base64Encode(cert->private_key_pem)) + "\n";
  } else {
    out += "      token: " + Scalar(std::get<KubeconfigBearerToken>(k.credential).token) + "\n";
  }
  out += "contexts:\n  - name: " + name + "\n    context:\n      cluster: " + name + "\n      user: " + user +
         "\n      namespace: default\ncurrent-context: " + name + "\n";
  return out;
}

}  // namespace septa::core
