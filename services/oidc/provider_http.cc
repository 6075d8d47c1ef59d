#include "services/oidc/provider_http.h"

#include <map>

#include "common/http_url.h"
#include "services/kube/transport.h"

namespace septa::oidc {

namespace {

class TransportProviderHttp final : public ProviderHttp {
 public:
  TransportProviderHttp(std::chrono::milliseconds timeout, std::string ca_pem)
      : timeout_(timeout), ca_pem_(std::move(ca_pem)) {}

  Result<ProviderReply> Get(const std::string& url) override { return Send("GET", url, "", ""); }
  Result<ProviderReply> PostForm(const std::string& url, const std::string& form,
                                 const std::string& authorization) override {
    return Send("POST", url, form, authorization);
  }

 private:
  Result<ProviderReply> Send(const std::string& method, const std::string& url, const std::string& body,
                             const std::string& authorization) {
    const std::optional<HttpUrl> parts = ParseHttpUrl(url);
    if (!parts || parts->authority.empty()) return InvalidArgument(url + " is not an http(s) URL");
    auto& transport = transports_[parts->origin];
    if (!transport) {
      kube::ClientConfig config;
      config.server = parts->origin;
      config.ca_pem = ca_pem_;
      SEPTA_ASSIGN_OR_RETURN(transport, kube::Transport::Create(config, timeout_));
    }
    kube::HttpRequest request(method, parts->target, body, method == "POST" ? "application/x-www-form-urlencoded" : "");
    request.max_body_bytes = kMaxProviderReplyBytes;
    auto response = transport->Send(request, authorization, timeout_);
    if (!response.ok()) {
      // The transport's messages say "kube:"; this is the identity provider.
      std::string message = response.status().message();
      if (message.rfind("kube: ", 0) == 0) message.erase(0, 6);
      if (message.find("body limit exceeded") != std::string::npos) {
        message = "the answer is longer than " + std::to_string(kMaxProviderReplyBytes / 1024) + " KiB";
      }
      return Status(response.status().code(), method + " " + url + ": " + message);
    }
    return ProviderReply{response->status, std::move(response->body)};
  }

  std::chrono::milliseconds timeout_;
  std::string ca_pem_;
  std::map<std::string, std::unique_ptr<kube::Transport>> transports_;
};

}  // namespace

std::unique_ptr<ProviderHttp> NewProviderHttp(std::chrono::milliseconds timeout, std::string ca_pem) {
  return std::make_unique<TransportProviderHttp>(timeout, std::move(ca_pem));
}

}  // namespace septa::oidc
