// Controller keys (after controller-runtime's typed reconcile.Request): a
// key is a regular value type, copyable and totally ordered (the work
// queue's sets and maps), with one codec, KeyCodec<Key>:
//   static std::string Encode(const Key&);                   // logs, metrics, NOTIFY payloads, sharding
//   static std::optional<Key> Decode(std::string_view text); // nullopt: not a key of this type
// and Decode(Encode(k)) == k. The work queue holds the keys themselves, so
// nothing is decoded on the way to Reconcile: Decode is for text from
// outside (a NOTIFY payload, a test).
//
// Keys in use: node names (std::string: the inventory and MIG layout
// controllers), tenancy::VirtualClusterRef (the provisioner: "<tenant>/<vcluster>")
// and syncer::SyncerKey (services/syncer/syncer_keys.h).
#pragma once

#include <concepts>
#include <optional>
#include <string>
#include <string_view>

#include "services/reconcile/work_queue.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::reconcile {

template <class Key>
struct KeyCodec;  // specialised per key type

template <class Key>
concept ControllerKey = QueueKey<Key> && requires(const Key& key, std::string_view text) {
  { KeyCodec<Key>::Encode(key) } -> std::convertible_to<std::string>;
  { KeyCodec<Key>::Decode(text) } -> std::same_as<std::optional<Key>>;
};

template <ControllerKey Key>
std::string EncodeKey(const Key& key) {
  return KeyCodec<Key>::Encode(key);
}
template <ControllerKey Key>
std::optional<Key> DecodeKey(std::string_view text) {
  return KeyCodec<Key>::Decode(text);
}

// A name (a node's; "<namespace>/<name>" of an informer's objects): itself.
// No object is named "": refused.
template <>
struct KeyCodec<std::string> {
  static std::string Encode(const std::string& key) { return key; }
  static std::optional<std::string> Decode(std::string_view text) {
    if (text.empty()) return std::nullopt;
    return std::string(text);
  }
};

// A virtual cluster: "<tenant>/<vcluster>".
template <>
struct KeyCodec<tenancy::VirtualClusterRef> {
  static std::string Encode(const tenancy::VirtualClusterRef& key) { return key.ToString(); }
  static std::optional<tenancy::VirtualClusterRef> Decode(std::string_view text) {
    return tenancy::ParseVirtualClusterRef(text);
  }
};

}  // namespace septa::reconcile
