#include "services/kubesim/kubesim.h"

#include <yaml-cpp/yaml.h>
#include <boost/beast/http/field.hpp>

#include "services/base/base64.h"
#include "services/base/secure_random.h"
#include "services/kubesim/auth.h"
#include "services/kubesim/scheduler_crds.h"

namespace septa::kubesim {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

bool SplitHostPort(const std::string& listen, std::string& host, std::uint16_t& port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  try {
    unsigned long p = std::stoul(listen.substr(colon + 1));
    if (p > 65535) return false;
    port = static_cast<std::uint16_t>(p);
  } catch (...) {
    return false;
  }
  return true;
}

// The Status body for errors the HTTP layer produces itself.
http::Response StatusErrorBody(http::HttpStatus status, std::string_view message) {
  ApiError e;
  e.code = static_cast<int>(status);
  e.message = std::string(message);
  switch (status) {
    case http::HttpStatus::payload_too_large: e.reason = "RequestEntityTooLarge"; break;
    case http::HttpStatus::bad_request: e.reason = "BadRequest"; break;
    case http::HttpStatus::conflict: e.reason = "Conflict"; break;
    case http::HttpStatus::service_unavailable: e.reason = "ServiceUnavailable"; break;
    default: e.reason = "BadRequest"; break;
  }
  http::Response res{status, 11};
  res.set(boost::beast::http::field::content_type, "application/json");
  res.body() = e.ToJson().dump();
  return res;
}

}  // namespace

KubeSim::KubeSim(KubeSimOptions options) : options_(std::move(options)) {
  const Clock& clock = options_.clock ? *options_.clock : system_clock_;
  RandomSource* random = options_.random;
  if (random == nullptr) {
    system_random_ = std::make_unique<base::SecureRandom>();
    random = system_random_.get();
  }
  cluster_ = std::make_unique<Cluster>(clock, *random, options_.history_limit);
  // A key of its own per process: tokens minted before a restart are refused after it.
  std::string key(32, '\0');
  if (random->Fill(std::span(reinterpret_cast<std::uint8_t*>(key.data()), key.size())).ok()) {
    cluster_->service_account_key = std::move(key);
  }
  api_ = std::make_unique<ApiServer>(*cluster_, options_.api);
}

KubeSim::~KubeSim() { Stop(); }

void KubeSim::Seed() {
  (void)SeedCluster(*api_);  // in memory only: nothing can refuse it
  // Where the simulated GPU operator reads its custom mig-parted configs.
  (void)api_->CreateObject("", "namespaces",
                           {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "gpu-operator"}}}});
}

Status KubeSim::Start() {
  std::string host;
  std::uint16_t port = 0;
  if (!SplitHostPort(options_.listen, host, port))
    return InvalidArgument("--listen: expected host:port, got \"" + options_.listen + "\"");
  auto now = std::chrono::system_clock::now();
  auto ca =
      http::IssueCertificate({options_.cluster_name + "-ca", {}, {}, {}, now - 1h, now + 24h * 3650, true}, nullptr);
  if (!ca.ok()) return ca.status();
  ca_ = *ca;
  std::vector<std::string> ips = {"127.0.0.1", "::1"};
  if (host != "127.0.0.1" && host != "::1" && host != "0.0.0.0" && host != "::" && host != "localhost")
    ips.push_back(host);
  auto serving = http::IssueCertificate(
      {"kube-apiserver", {}, {"localhost", "kubernetes", "kubernetes.default"}, ips, now - 1h, now + 24h * 365}, &ca_);
  if (!serving.ok()) return serving.status();
  auto tls = http::MakeServerTlsContext({serving->certificate, serving->private_key, ca_.certificate, false});
  if (!tls.ok()) return tls.status();
  Seed();
  if (options_.scheduler_crds) SEPTA_RETURN_IF_ERROR(InstallSchedulerCrds(*api_));
  if (options_.inventory) {
    node_sim_ = std::make_unique<NodeSim>(*cluster_, *api_, *options_.inventory, options_.nodes);
    SEPTA_RETURN_IF_ERROR(node_sim_->Start());
    if (options_.dcgm) {
      std::vector<std::string> gpu_nodes;
      for (const NodeSpec& spec : options_.inventory->nodes) {
        if (!spec.gpu_model.empty()) gpu_nodes.push_back(spec.name);
      }
      dcgm_ = std::make_unique<DcgmExporters>(*cluster_, *api_, *options_.dcgm);
      SEPTA_RETURN_IF_ERROR(dcgm_->Start(gpu_nodes));
    }
  }
  workloads_ = std::make_unique<WorkloadControllers>(*cluster_, *api_);

  auto handler = [api = api_.get(), fault = options_.fault](http::Request&& req, std::shared_ptr<http::Exchange> ex) {
    if (fault) {
      if (auto status = fault(req)) return ex->Reply(StatusErrorBody(*status, "injected fault"));
    }
    api->Handle(std::move(req), std::move(ex));
  };
  http::ServerOptions so;
  so.host = host;
  so.port = port;
  so.tls = *tls;
  so.io_threads = options_.io_threads;
  so.body_limit = options_.body_limit;
  so.error_formatter = StatusErrorBody;
  https_ = std::make_unique<http::Server>(so, handler);
  SEPTA_RETURN_IF_ERROR(https_->Start());
  if (!options_.insecure_listen.empty()) {
    http::ServerOptions plain = so;
    plain.tls = nullptr;
    if (!SplitHostPort(options_.insecure_listen, plain.host, plain.port))
      return InvalidArgument("--insecure-listen: expected host:port");
    if (plain.host != "127.0.0.1" && plain.host != "::1" && plain.host != "localhost")
      return InvalidArgument("--insecure-listen: plain HTTP is served on loopback only");
    // Plain HTTP has no client certificates: only bearer tokens authenticate.
    http_ = std::make_unique<http::Server>(plain, handler);
    SEPTA_RETURN_IF_ERROR(http_->Start());
  }
  if (options_.tick_interval.count() > 0) {
    ticker_ = std::thread([this] {
      while (!stopping_) {
        std::this_thread::sleep_for(options_.tick_interval);
        Tick();
      }
    });
  }
  return Status::Ok();
}

void KubeSim::Tick() {
  api_->Tick();
  if (node_sim_) node_sim_->Tick();
  if (dcgm_) dcgm_->Tick();
  workloads_->Tick();
}

void KubeSim::Stop() {
  if (stopping_.exchange(true)) return;
  if (ticker_.joinable()) ticker_.join();
  if (https_) https_->Shutdown(1s);
  if (http_) http_->Shutdown(1s);
  if (dcgm_) dcgm_->Stop();
}

std::uint16_t KubeSim::https_port() const { return https_ ? https_->port() : 0; }
std::uint16_t KubeSim::http_port() const { return http_ ? http_->port() : 0; }
std::string KubeSim::server_url() const { return "https://127.0.0.1:" + std::to_string(https_port()); }

Result<http::KeyPairPem> KubeSim::IssueClientCertificate(const std::string& user,
                                                         const std::vector<std::string>& groups, TimePoint not_before,
                                                         TimePoint not_after) const {
  return http::IssueCertificate({user, groups, {}, {}, not_before, not_after}, &ca_);
}

std::string KubeSim::Kubeconfig(const std::string& user, const http::KeyPairPem& client) const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << options_.cluster_name;
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "server" << YAML::Value << server_url();
  out << YAML::Key << "certificate-authority-data" << YAML::Value << base::Base64Encode(ca_.certificate);
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << user;
  out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "client-certificate-data" << YAML::Value << base::Base64Encode(client.certificate);
  out << YAML::Key << "client-key-data" << YAML::Value << base::Base64Encode(client.private_key);
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  std::string context = user + "@" + options_.cluster_name;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << context;
  out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cluster" << YAML::Value << options_.cluster_name;
  out << YAML::Key << "user" << YAML::Value << user;
  out << YAML::Key << "namespace" << YAML::Value << "default";
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << context;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Result<std::string> KubeSim::AdminKubeconfig() const {
  auto now = std::chrono::system_clock::now();
  auto cert = IssueClientCertificate("kubesim-admin", {std::string(kAdminGroup)}, now - 1h, now + 24h * 365);
  if (!cert.ok()) return cert.status();
  return Kubeconfig("kubesim-admin", *cert);
}

}  // namespace septa::kubesim
