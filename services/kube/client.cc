#include "services/kube/client.h"

#include <algorithm>
#include <limits>
#include <thread>

#include "common/documents.h"
#include "services/base/secure_random.h"

namespace septa::kube {

using nlohmann::json;

namespace {

Code CodeForReason(const std::string& reason, int http_status) {
  if (reason == "NotFound") return Code::kNotFound;
  if (reason == "AlreadyExists") return Code::kAlreadyExists;
  if (reason == "Conflict") return Code::kAborted;
  if (reason == "Invalid" || reason == "BadRequest" || reason == "UnsupportedMediaType" ||
      reason == "RequestEntityTooLarge" || reason == "NotAcceptable")
    return Code::kInvalidArgument;
  if (reason == "Unauthorized") return Code::kUnauthenticated;
  if (reason == "Forbidden") return Code::kPermissionDenied;
  if (reason == "TooManyRequests") return Code::kResourceExhausted;
  if (reason == "Gone" || reason == "Expired") return Code::kOutOfRange;
  if (reason == "MethodNotAllowed") return Code::kUnimplemented;
  if (reason == "Timeout" || reason == "ServerTimeout") return Code::kDeadlineExceeded;
  if (reason == "ServiceUnavailable") return Code::kUnavailable;
  if (reason == "InternalError") return Code::kInternal;
  switch (http_status) {
    case 400:
    case 413:
    case 415:
    case 422: return Code::kInvalidArgument;
    case 401: return Code::kUnauthenticated;
    case 403: return Code::kPermissionDenied;
    case 404: return Code::kNotFound;
    case 405: return Code::kUnimplemented;
    case 409: return Code::kAborted;
    case 410: return Code::kOutOfRange;
    case 429: return Code::kResourceExhausted;
    case 503: return Code::kUnavailable;
    case 504: return Code::kDeadlineExceeded;
    default: return http_status >= 500 ? Code::kInternal : Code::kUnknown;
  }
}

std::string ReasonForStatus(int http_status) {
  switch (http_status) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return http_status >= 500 ? "InternalError" : "Unknown";
  }
}

bool Retriable(int http_status) {
  return http_status == 500 || http_status == 502 || http_status == 503 || http_status == 504;
}

std::string UrlEncode(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::string Query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    q += (q.empty() ? "?" : "&") + k + "=" + UrlEncode(v);
  }
  return q;
}

// What a reply may hold: one object (or a Status) within the document
// bound; its size is the transport's to bound.
constexpr DocumentLimits kReplyLimits{.max_bytes = std::numeric_limits<std::size_t>::max()};

Result<json> ParseJsonBody(const HttpResponse& res, const std::string& what) {
  auto j = ParseJson(res.body, kReplyLimits);
  if (!j.ok()) return Internal("kube: " + what + ": the server sent a body that is not JSON: " + j.status().message());
  return j;
}

}  // namespace

std::string_view KubeReason(const Status& status) {
  std::string_view m = status.message();
  auto colon = m.find(": ");
  return colon == std::string_view::npos ? std::string_view() : m.substr(0, colon);
}

Status StatusFromResponse(const HttpResponse& response, const std::string& what) {
  auto parsed = ParseJson(response.body, kReplyLimits);
  const json body = parsed.ok() ? *std::move(parsed) : json();
  std::string reason, message;
  std::vector<FieldViolation> violations;
  if (body.is_object() && body.value("kind", "") == "Status") {
    reason = body.value("reason", "");
    message = body.value("message", "");
    if (body.contains("details") && body["details"].is_object()) {
      for (const auto& c : body["details"].value("causes", json::array())) {
        violations.push_back({c.value("field", ""), c.value("message", "")});
      }
    }
  }
  if (reason.empty()) reason = ReasonForStatus(response.status);
  if (message.empty())
    message =
        "HTTP " + std::to_string(response.status) + (response.body.empty() ? "" : ": " + response.body.substr(0, 200));
  return Status(CodeForReason(reason, response.status), reason + ": " + message + " (" + what + ")",
                std::move(violations));
}

Client::Client(ClientConfig config, ClientOptions options) : config_(std::move(config)), options_(std::move(options)) {
  clock_ = options_.clock ? options_.clock : &system_clock_;
  if (options_.random) {
    random_ = options_.random;
  } else {
    own_random_ = std::make_unique<base::SecureRandom>();
    random_ = own_random_.get();
  }
  if (!options_.sleep) options_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
}

Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::Create(ClientConfig config, ClientOptions options) {
  std::unique_ptr<Client> c(new Client(std::move(config), std::move(options)));
  auto transport = Transport::Create(c->config_, c->options_.connect_timeout);
  if (!transport.ok()) return transport.status();
  c->transport_ = std::move(*transport);
  c->credentials_ = std::make_unique<Credentials>(c->config_, *c->clock_);
  return c;
}

std::chrono::milliseconds Client::Backoff(int attempt) {
  auto cap = std::min<long long>(options_.backoff_max.count(), options_.backoff_base.count() << std::min(attempt, 20));
  std::uint8_t bytes[4] = {};
  // Jitter only spreads retries out; without entropy, back off by the full half.
  if (!random_->Fill(bytes).ok()) return std::chrono::milliseconds(cap / 2);
  std::uint32_t r =
      (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) | bytes[3];
  return std::chrono::milliseconds(cap / 2 + static_cast<long long>(r % static_cast<std::uint32_t>(cap / 2 + 1)));
}

Result<HttpResponse> Client::Call(const HttpRequest& request, bool idempotent) {
  const std::string what = request.method + " " + request.target;
  bool reauthenticated = false;
  for (int attempt = 0;; ++attempt) {
    auto auth = credentials_->AuthorizationHeader();
    if (!auth.ok()) return auth.status();
    auto res = transport_->Send(request, *auth, options_.request_timeout);
    const bool last = attempt >= options_.max_retries;
    if (!res.ok()) {
      if (res.status().code() == Code::kUnavailable && idempotent && !last) {
        Sleep(Backoff(attempt));
        continue;
      }
      return res.status();
    }
    if (res->status == 401 && config_.exec && !reauthenticated) {  // the plugin's token may have expired early
      credentials_->Invalidate();
      reauthenticated = true;
      continue;
    }
    if ((res->status == 429 || (Retriable(res->status) && idempotent)) && !last) {
      auto wait = Backoff(attempt);
      if (auto it = res->headers.find("retry-after"); it != res->headers.end()) {
        try {
          wait = std::chrono::seconds(std::stol(it->second));
        } catch (...) {
        }
      }
      Sleep(wait);
      continue;
    }
    return res;
  }
}

Result<HttpResponse> Client::OpenStream(const HttpRequest& request, std::chrono::milliseconds idle_timeout,
                                        const std::function<bool(std::string_view)>& on_data, StreamCancel* cancel) {
  auto auth = credentials_->AuthorizationHeader();
  if (!auth.ok()) return auth.status();
  return transport_->Stream(request, *auth, idle_timeout, on_data, cancel);
}

Result<json> Client::JsonCall(const HttpRequest& request, bool idempotent) {
  auto res = Call(request, idempotent);
  if (!res.ok()) return res.status();
  const std::string what = request.method + " " + request.target;
  if (res->status < 200 || res->status >= 300) return StatusFromResponse(*res, what);
  return ParseJsonBody(*res, what);
}

std::string Client::Path(const Resource& r, const std::string& ns, const std::string& name,
                         const std::string& subresource) const {
  std::string p = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !ns.empty()) p += "/namespaces/" + UrlEncode(ns);
  p += "/" + r.resource;
  if (!name.empty()) p += "/" + UrlEncode(name);
  if (!subresource.empty()) p += "/" + subresource;
  return p;
}

Result<json> Client::Get(const Resource& r, const std::string& ns, const std::string& name, const std::string& sub) {
  return JsonCall({"GET", Path(r, ns, name, sub)}, true);
}

Result<ListPage> Client::List(const Resource& r, const std::string& ns, const ListOptions& o) {
  std::string target = Path(r, ns) + Query({{"labelSelector", o.label_selector},
                                            {"fieldSelector", o.field_selector},
                                            {"limit", o.limit ? std::to_string(o.limit) : ""},
                                            {"continue", o.continue_token},
                                            {"resourceVersion", o.resource_version}});
  auto res = Call({"GET", target}, true);
  if (!res.ok()) return res.status();
  if (res->status < 200 || res->status >= 300) return StatusFromResponse(*res, "GET " + target);
  return DecodeListBody(res->body);
}

Result<ListPage> Client::ListAll(const Resource& r, const std::string& ns, ListOptions o) {
  if (o.limit == 0) o.limit = 500;
  ListPage all;
  for (;;) {
    auto page = List(r, ns, o);
    if (!page.ok()) return page.status();
    if (all.resource_version.empty()) all.resource_version = page->resource_version;
    all.items.insert(all.items.end(), std::make_move_iterator(page->items.begin()),
                     std::make_move_iterator(page->items.end()));
    all.left_out.insert(all.left_out.end(), page->left_out.begin(), page->left_out.end());
    if (page->continue_token.empty()) return all;
    o.continue_token = page->continue_token;
  }
}

Result<json> Client::Create(const Resource& r, const std::string& ns, const json& object, const WriteOptions& o) {
  std::string target =
      Path(r, ns, "", "") + Query({{"dryRun", o.dry_run ? "All" : ""}, {"fieldManager", o.field_manager}});
  return JsonCall({"POST", target, object.dump(), "application/json"}, false);
}

Result<json> Client::CreateSubresource(const Resource& r, const std::string& ns, const std::string& name,
                                       const std::string& subresource, const json& object) {
  if (name.empty()) return InvalidField("name", "required for a subresource");
  return JsonCall({"POST", Path(r, ns, name, subresource), object.dump(), "application/json"}, false);
}

Result<json> Client::Update(const Resource& r, const std::string& ns, const json& object, const WriteOptions& o) {
  std::string name = object.value("metadata", json::object()).value("name", "");
  if (name.empty()) return InvalidField("metadata.name", "required for an update");
  std::string target =
      Path(r, ns, name, o.subresource) + Query({{"dryRun", o.dry_run ? "All" : ""}, {"fieldManager", o.field_manager}});
  return JsonCall({"PUT", target, object.dump(), "application/json"}, true);
}

Result<json> Client::Patch(const Resource& r, const std::string& ns, const std::string& name, PatchType type,
                           const std::string& body, const PatchOptions& o) {
  const char* content_type = type == PatchType::kMerge       ? "application/merge-patch+json"
                             : type == PatchType::kJson      ? "application/json-patch+json"
                             : type == PatchType::kStrategic ? "application/strategic-merge-patch+json"
                                                             : "application/apply-patch+yaml";
  if (type == PatchType::kApply && o.field_manager.empty()) return InvalidField("field_manager", "required for apply");
  std::string target =
      Path(r, ns, name, o.subresource) +
      Query({{"dryRun", o.dry_run ? "All" : ""}, {"fieldManager", o.field_manager}, {"force", o.force ? "true" : ""}});
  return JsonCall({"PATCH", target, body, content_type}, type == PatchType::kApply || type == PatchType::kMerge);
}

Result<json> Client::Apply(const Resource& r, const std::string& ns, const json& object,
                           const std::string& field_manager, bool force) {
  std::string name = object.value("metadata", json::object()).value("name", "");
  if (name.empty()) return InvalidField("metadata.name", "required for apply");
  return Patch(r, ns, name, PatchType::kApply, object.dump(), {false, field_manager, force, ""});
}

Status Client::Delete(const Resource& r, const std::string& ns, const std::string& name, const DeleteOptions& o) {
  json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (o.precondition_uid) body["preconditions"]["uid"] = *o.precondition_uid;
  if (o.precondition_resource_version) body["preconditions"]["resourceVersion"] = *o.precondition_resource_version;
  if (o.propagation_policy) body["propagationPolicy"] = *o.propagation_policy;
  if (o.grace_period_seconds) body["gracePeriodSeconds"] = *o.grace_period_seconds;
  std::string target = Path(r, ns, name) + Query({{"dryRun", o.dry_run ? "All" : ""}});
  auto res = JsonCall({"DELETE", target, body.dump(), "application/json"}, true);
  return res.ok() ? Status::Ok() : res.status();
}

}  // namespace septa::kube
