// Watches: a chunked stream of {"type","object"} events per client, fed by
// Storage under its lock, with bookmarks, timeouts and selector transitions.
#include <boost/beast/http/field.hpp>

#include "services/kubesim/api_internal.h"
#include "services/kubesim/objects.h"
#include "services/kubesim/selectors.h"

namespace septa::kubesim {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

class HttpWatchSink final : public WatchSink {
 public:
  struct Options {
    std::shared_ptr<const ResourceType> type;
    std::string api_version;
    std::string ns;
    LabelSelector labels;
    FieldSelector fields;
    bool bookmarks = false;
    bool table = false;
    SteadyTime deadline;
    std::chrono::milliseconds bookmark_interval{60'000};
  };
  HttpWatchSink(std::shared_ptr<http::Exchange> ex, Options options, const Clock& clock)
      : ex_(std::move(ex)), o_(std::move(options)), clock_(clock), last_bookmark_(std::chrono::steady_clock::now()) {}

  bool Deliver(const WatchEvent& e) override {
    if (ex_->closed()) return false;
    const json& obj = *e.object;
    if (!o_.ns.empty() && obj["metadata"].value("namespace", "") != o_.ns) return true;
    WatchEvent::Type type = e.type;
    bool matches = Matches(obj);
    if (e.type == WatchEvent::Type::kModified && e.previous) {
      bool matched = Matches(*e.previous);
      if (!matched && !matches) return true;
      if (matched && !matches) type = WatchEvent::Type::kDeleted;
      if (!matched && matches) type = WatchEvent::Type::kAdded;
    } else if (!matches) {
      return true;
    }
    // A selector transition's synthesized DELETED or ADDED shows the object as it is: its stored text too.
    return Write(EventTypeName(type), obj, e.text);
  }

  bool Bookmark(std::uint64_t rv) override {
    if (ex_->closed()) return false;
    auto now = std::chrono::steady_clock::now();
    if (now >= o_.deadline) {
      ex_->EndStream();
      return false;
    }
    if (!o_.bookmarks || now - last_bookmark_ < o_.bookmark_interval) return true;
    last_bookmark_ = now;
    json bookmark = {{"kind", o_.type->kind},
                     {"apiVersion", o_.api_version},
                     {"metadata", {{"resourceVersion", std::to_string(rv)}}}};
    return ex_->WriteChunk("{\"type\":\"BOOKMARK\",\"object\":" + bookmark.dump() + "}\n");
  }

 private:
  bool Matches(const json& obj) const {
    const json& md = obj["metadata"];
    auto it = md.find("labels");
    return o_.labels.Matches(it == md.end() ? json() : *it) && o_.fields.Matches(obj);
  }

  // `text`: `obj` as stored, when the storage has it: sent as is (the one
  // copy every watcher's stream holds) unless a table or another CRD
  // version is asked for.
  bool Write(std::string_view type, const json& obj, const JsonTextPtr& text = nullptr) {
    static const auto kEnd = std::make_shared<const std::string>("}\n");
    std::string head = "{\"type\":\"" + std::string(type) + "\",\"object\":";
    if (o_.table) {
      head += ToTable(*o_.type, {&obj}, obj["metadata"].value("resourceVersion", ""), clock_.Now(), false).dump();
    } else if (o_.type->from_crd && obj.value("apiVersion", "") != o_.api_version) {
      json copy = obj;
      copy["apiVersion"] = o_.api_version;
      head += copy.dump();
    } else if (text != nullptr) {
      return ex_->WriteChunk({std::make_shared<const std::string>(std::move(head)), text, kEnd});
    } else {
      head += obj.dump();
    }
    return ex_->WriteChunk({std::make_shared<const std::string>(std::move(head)), kEnd});
  }

  std::shared_ptr<http::Exchange> ex_;
  Options o_;
  const Clock& clock_;
  SteadyTime last_bookmark_;
};

}  // namespace

void ApiServer::Impl::Watch(Call& call) {
  auto labels = LabelSelector::Parse(call.Query("labelSelector"));
  if (!labels.ok()) return ReplyError(*call.exchange, labels.error());
  auto fields = FieldSelector::Parse(call.Query("fieldSelector"));
  if (!fields.ok()) return ReplyError(*call.exchange, fields.error());
  std::optional<std::uint64_t> since;
  if (std::string rv = call.Query("resourceVersion"); !rv.empty() && rv != "0") {
    try {
      since = std::stoull(rv);
    } catch (...) {
      return ReplyError(*call.exchange, BadRequestError("invalid resourceVersion \"" + rv + "\""));
    }
  }
  long timeout_seconds = 1800;
  if (std::string t = call.Query("timeoutSeconds"); !t.empty()) {
    try {
      timeout_seconds = std::clamp(std::stol(t), 1L, 86400L);
    } catch (...) {
      return ReplyError(*call.exchange, BadRequestError("invalid timeoutSeconds \"" + t + "\""));
    }
  }
  HttpWatchSink::Options o;
  o.type = call.type;
  o.api_version = call.api_version();
  o.ns = call.ns;
  o.labels = std::move(*labels);
  o.fields = std::move(*fields);
  o.bookmarks = call.Query("allowWatchBookmarks") == "true" || call.Query("allowWatchBookmarks") == "1";
  o.table = call.table;
  o.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  o.bookmark_interval = options.bookmark_interval;

  http::Response head{boost::beast::http::status::ok, 11};
  head.set(boost::beast::http::field::content_type, "application/json");
  call.exchange->StartStream(std::move(head));
  auto sink = std::make_shared<HttpWatchSink>(call.exchange, std::move(o), cluster.clock);
  auto watched = cluster.storage.Watch(call.type->key(), since, sink);
  if (!watched.ok()) {
    call.exchange->WriteChunk("{\"type\":\"ERROR\",\"object\":" + watched.error().ToJson().dump() + "}\n");
    call.exchange->EndStream();
  }
}

}  // namespace septa::kubesim
