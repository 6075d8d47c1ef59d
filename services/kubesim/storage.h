// In-memory object storage with one global, monotonic resource version, a
// bounded event history and live watchers: kubesim's etcd.
//
// Objects are immutable once stored (shared_ptr<const json>), so readers take
// a reference under a short lock and serialize outside it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "services/kubesim/api_error.h"

namespace septa::kubesim {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;
// An object's JSON text, made once when it is stored so that lists do not
// serialize the same objects again and again.
using JsonTextPtr = std::shared_ptr<const std::string>;

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted };
  Type type = Type::kAdded;
  std::uint64_t resource_version = 0;
  ObjectPtr object;
  ObjectPtr previous;  // MODIFIED only: the object before, for selector transitions
  // `object` as JSON text when the storage has it (ADDED, MODIFIED): every
  // watcher sends the same text instead of serializing the object again.
  JsonTextPtr text{};
};

std::string_view EventTypeName(WatchEvent::Type type);

// Receives the events of one resource type, under the storage lock and in
// resource-version order. Must not block or call back into Storage.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  // false: the watcher is gone; storage drops it.
  virtual bool Deliver(const WatchEvent& event) = 0;
  // Periodic progress notice (BOOKMARK); false: the watcher is gone.
  virtual bool Bookmark(std::uint64_t resource_version) = 0;
};

// What a write does, decided by a function that sees the current object.
struct Mutation {
  enum class Kind { kNothing, kPut, kDelete };
  Kind kind = Kind::kNothing;
  // kPut: the new object, resourceVersion filled in by storage; kDelete:
  // optionally the object's last state (default: the current one).
  nlohmann::json object;
};
using MutateFn = std::function<ApiResult<Mutation>(const nlohmann::json* current)>;

struct ListResult {
  std::vector<ObjectPtr> items;
  std::vector<JsonTextPtr> texts;  // items[i] as JSON text
  std::uint64_t resource_version = 0;
  std::string last_key;  // set when `limit` cut the list: continue after this key
};

// Makes writes durable before they become visible (write-through, for the
// virtual control planes): Storage calls Record under its write lock once a
// write is decided and before it is applied or published. An error aborts
// the write: memory is unchanged and the client gets 503 (409 Conflict for
// kAborted: the journal holds a newer version, written by another copy), so
// no write is acknowledged that is not durable. Must not call back into Storage.
class StorageJournal {
 public:
  virtual ~StorageJournal() = default;
  // `text`: the object's JSON text as stored; null when it was deleted.
  virtual Status Record(const std::string& type_key, const std::string& ns, const std::string& name,
                        std::uint64_t resource_version, const std::string* text) = 0;
  // Storage::Converge made the storage hold what the journal holds at
  // `resource_version` (called under the write lock, so no write comes between).
  virtual void Converged(std::uint64_t resource_version) {}
};

// Bounds on what a storage holds (a virtual cluster's api_limits,
// tenancy/api_limits.h); absent: no bound.
struct StorageQuota {
  std::string name = "api_limits";         // the quota the refusal names
  std::optional<std::uint64_t> objects{};  // stored objects
  std::optional<std::uint64_t> bytes{};    // their JSON text, summed ("object_bytes")
};

struct StorageUsage {
  std::uint64_t objects = 0;
  std::uint64_t bytes = 0;
  bool operator==(const StorageUsage&) const = default;
};

class Storage {
 public:
  explicit Storage(std::size_t history_limit = 10'000);

  // A write is refused only for what it grows past the quota, 403 as a
  // ResourceQuota refuses it (`configmaps "x" is forbidden: exceeded quota:
  // api_limits, requested: objects=1, used: objects=5, limited: objects=5`):
  // a create past `objects`; a create or update whose text takes the sum
  // past `bytes`, unless the object is being deleted (its
  // deletionTimestamp set: graceful deletion and finalizers must finish).
  // Deletes always pass, and a quota lowered below the usage takes nothing
  // away. Checked under the write lock before the journal, so nothing of a
  // refused write is stored anywhere. Takes effect from the next write.
  void SetQuota(StorageQuota quota);
  StorageUsage usage() const;

  // Set before the storage is used; null: writes are in memory only.
  void SetJournal(StorageJournal* journal) { journal_ = journal; }
  // Loading what a journal recorded, before the storage is used: puts an
  // object as it was (no event, not journaled), and continues the resource
  // version after `resource_version` (watches from before it get 410).
  void Restore(const std::string& type_key, const std::string& ns, const std::string& name, nlohmann::json object,
               std::string text);
  void RestoreResourceVersion(std::uint64_t resource_version);

  // An object as the journal holds it, for Converge.
  struct JournaledObject {
    std::string type_key, ns, name;
    nlohmann::json object;  // its metadata.resourceVersion as journaled
    std::string text;
  };
  // Makes the storage hold exactly `objects`, as another copy on the same
  // journal left them at `resource_version`: the differences are published
  // to watchers and history like writes (ADDED or MODIFIED at each object's
  // version, in version order, then DELETED at `resource_version`), nothing
  // is journaled, and the version continues after `resource_version`.
  // Only if no write was applied here since the storage was at
  // `unchanged_since` (current_resource_version(), read before `objects`
  // were): `objects` may miss such a write, so then nothing changes and the
  // result is false (the caller reads them again).
  bool Converge(std::vector<JournaledObject> objects, std::uint64_t resource_version, std::uint64_t unchanged_since);

  std::uint64_t current_resource_version() const;
  // Watches and continue tokens from before this version can no longer be served.
  std::uint64_t compacted_resource_version() const;

  ObjectPtr Get(const std::string& type_key, const std::string& ns, const std::string& name) const;

  // Objects of a type (in `ns`, or all namespaces when empty), ordered by
  // namespace then name, starting after `start_after`, at most `limit`
  // (0: no limit) of those `filter` accepts.
  ListResult List(const std::string& type_key, const std::string& ns,
                  const std::function<bool(const nlohmann::json&)>& filter, std::size_t limit,
                  const std::string& start_after) const;

  // Runs `fn` on the current object (nullptr when absent) under the write
  // lock and applies its decision atomically. Returns the stored object (for
  // a delete: the last state, stamped with the deletion's version), or the
  // current one for kNothing. With `dry_run` nothing is stored.
  ApiResult<ObjectPtr> Mutate(const std::string& type_key, const std::string& ns, const std::string& name,
                              const MutateFn& fn, bool dry_run = false);

  // Registers a watcher on a type. With `since` set, first replays the
  // history after that version (410 Expired when it is gone); otherwise
  // first sends every current object as ADDED. Atomic with respect to writes.
  ApiResult<std::uint64_t> Watch(const std::string& type_key, std::optional<std::uint64_t> since,
                                 std::shared_ptr<WatchSink> sink);
  // Sends a bookmark at the current version to every watcher; drops the gone.
  void BookmarkAll();
  std::size_t watcher_count() const;

  // Removes a whole type (a deleted CRD), sending DELETED for each object.
  void DropType(const std::string& type_key);

 private:
  struct TypeData {
    struct Entry {
      ObjectPtr object;
      JsonTextPtr text;
    };
    std::map<std::string, Entry> objects;  // "<ns>/<name>"
    std::vector<std::shared_ptr<WatchSink>> sinks;
    std::deque<WatchEvent> history;
  };
  void Publish(const std::string& type_key, TypeData& data, WatchEvent event);
  // Under the write lock: the refusal of a write of `type_key` `name` from
  // `before` bytes (0: a create) to `after`, if the quota refuses it.
  std::optional<ApiError> OverQuota(const std::string& type_key, const std::string& name, bool creates,
                                    std::uint64_t before, std::uint64_t after, bool terminating) const;
  // Keeps usage_ with an object's text replaced (null: absent) by another.
  void Account(const JsonTextPtr& before, const JsonTextPtr& after);
  // The journal's verdict on a write about to be applied (nullopt: go on).
  std::optional<ApiError> Journal(const std::string& type_key, const std::string& ns, const std::string& name,
                                  std::uint64_t resource_version, const std::string* text);

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, TypeData> types_;
  std::uint64_t resource_version_ = 1;
  std::uint64_t compacted_ = 1;
  std::size_t history_limit_;
  std::size_t history_size_ = 0;
  std::deque<std::pair<std::uint64_t, std::string>> history_order_;  // (version, type) to evict globally
  StorageJournal* journal_ = nullptr;
  StorageQuota quota_;
  StorageUsage usage_;
};

}  // namespace septa::kubesim
