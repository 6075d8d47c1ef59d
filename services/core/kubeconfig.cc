#include "services/core/kubeconfig.h"

#include <nlohmann/json.hpp>

#include "services/base/base64.h"
#include "services/base/yaml_json.h"

namespace septa::core {

std::string RenderKubeconfig(const ClientCertificateKubeconfig& k) {
  using ordered_json = nlohmann::ordered_json;
  const std::string user = k.user + "@" + k.name;
  ordered_json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters",
       ordered_json::array({ordered_json{
           {"name", k.name},
           {"cluster", {{"server", k.server}, {"certificate-authority-data", base::Base64Encode(k.server_ca)}}}}})},
      {"users", ordered_json::array({ordered_json{{"name", user},
                                                  {"user",
                                                   {{"client-certificate-data", base::Base64Encode(k.certificate_pem)},
                                                    {"client-key-data", base::Base64Encode(k.private_key_pem)}}}}})},
      {"contexts",
       ordered_json::array({ordered_json{
           {"name", k.name}, {"context", {{"cluster", k.name}, {"user", user}, {"namespace", "default"}}}}})},
      {"current-context", k.name},
  };
  return base::JsonToYaml(config);
}

}  // namespace septa::core
