// Watching: a parser for the stream of concatenated JSON events, one watch
// request, and an informer that keeps a local cache by list+watch, resuming
// from the last resource version, re-listing on 410 and reconnecting with
// jittered backoff.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "services/kube/client.h"

namespace septa::kube {

// Cuts complete top-level JSON values out of a byte stream, however the
// bytes are split and whether or not values are separated by newlines.
class JsonStreamSplitter {
 public:
  // Calls `on_value` for each value completed by `data`.
  void Feed(std::string_view data, const std::function<void(std::string_view)>& on_value);
  std::size_t buffered() const { return buffer_.size(); }

 private:
  std::string buffer_;
  std::size_t pos_ = 0;    // next byte to scan
  std::size_t start_ = 0;  // first byte of the value being scanned
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
};

// The largest watch event read (a value the stream splitter holds that
// grows past it ends the watch): an object in etcd is at most 1.5 MiB, a
// request body 3 MiB.
inline constexpr std::size_t kMaxWatchEventBytes = 16 * 1024 * 1024;

struct WatchEvent {
  std::string type;  // ADDED MODIFIED DELETED BOOKMARK ERROR
  nlohmann::json object;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // empty: start with the current state
  bool allow_bookmarks = true;
  long timeout_seconds = 300;  // the server ends the watch after this
};

// Runs one watch request until the server ends it, `on_event` returns false,
// or `cancel` fires. An ERROR event is delivered like any other. An event
// beyond the document bounds (common/documents.h; its object nested deeper
// than 128 levels, or larger than kMaxWatchEventBytes) ends the watch with
// INVALID_ARGUMENT: a relist leaves that object out by name.
Status WatchOnce(Client& client, const Resource& resource, const std::string& ns, const WatchOptions& options,
                 const std::function<bool(const WatchEvent&)>& on_event, StreamCancel* cancel = nullptr);

struct InformerHandlers {
  std::function<void(const nlohmann::json&)> on_add;
  std::function<void(const nlohmann::json& old_object, const nlohmann::json& new_object)> on_update;
  std::function<void(const nlohmann::json&)> on_delete;
};

// Handlers run one at a time, on the informer's threads. With a resync
// period, every cached object is handed to on_update again each period of
// the client's clock (ClientOptions::clock), so level-based handlers re-check
// state they may have missed, on a quiet resource too.
class Informer {
 public:
  Informer(Client& client, Resource resource, std::string ns, ListOptions selectors, InformerHandlers handlers,
           std::chrono::milliseconds resync_period = std::chrono::milliseconds(0));
  ~Informer();

  // Called with each object a list leaves out (ListPage::left_out,
  // "<ns>/<name>: <why>"), at every list that does; set before Start().
  void OnLeftOut(std::function<void(const std::string&)> on_left_out) { on_left_out_ = std::move(on_left_out); }
  void Start();
  void Stop();
  // True once the first list has been loaded into the cache.
  bool WaitForSync(std::chrono::milliseconds timeout);
  // Why the last list failed (it is tried again with backoff); OK once one
  // has succeeded since. What a caller whose WaitForSync timed out reports.
  Status last_list_error() const;

  std::optional<nlohmann::json> Get(const std::string& ns, const std::string& name) const;
  std::vector<nlohmann::json> List() const;
  // The cached objects of namespace `ns` only: the cache is ordered by
  // namespace, so the others are neither scanned nor copied.
  std::vector<nlohmann::json> ListNamespace(const std::string& ns) const;
  std::string last_resource_version() const;
  int relists() const;

 private:
  void Run();
  void RunResyncs(TimePoint first, std::stop_token stop);
  Status ListAndReplace();
  void Apply(const WatchEvent& event);
  void Resync();
  bool SleepUnlessStopped(std::chrono::milliseconds d);

  Client& client_;
  Resource resource_;
  std::string ns_;
  ListOptions selectors_;
  InformerHandlers handlers_;
  std::function<void(const std::string&)> on_left_out_;
  std::chrono::milliseconds resync_period_;

  std::mutex handlers_mu_;  // held while handlers run, so they see the cache's changes in order; before mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, nlohmann::json> cache_;  // "<ns>/<name>"
  std::string resource_version_;
  bool synced_ = false;
  Status list_error_;
  bool stopping_ = false;
  int relists_ = 0;
  StreamCancel cancel_;
  std::thread thread_;
  std::stop_source stop_resyncs_;
  std::thread resync_thread_;
};

}  // namespace septa::kube
