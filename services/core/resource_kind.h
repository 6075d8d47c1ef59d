// The shape every kind of resource that can be declared (GitOps' Apply and
// Diff) answers to: validate a declared object, get the live one, create,
// update and delete it in the caller's transaction, and say field by field
// how live and declared differ. Apply dispatches on it (resource_kinds.h)
// and writes a whole document in one transaction; each kind's own RPCs run
// the very same writes in a transaction of their own, so a declared object
// and an RPC can never be checked or audited differently.
#pragma once

#include <concepts>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/capacity_ledger.h"
#include "services/core/store.h"
#include "tenancy/api_limits.h"

namespace septa::core {

// One field that differs, by its API path ("quota.gpu_milli",
// "labels.team"), with both values as the API's JSON shows them; "" for
// an absent one.
struct FieldChange {
  std::string path;
  std::string live;
  std::string desired;
  bool operator==(const FieldChange&) const = default;
};

// The writable fields a declaration sets (a YAML document's keys, or a
// FieldMask): only these are compared and written, so a field left out is
// neither reset nor reported. Empty: every writable field (AIP-134's
// replace). A path covers its members ("quota" covers "quota.pods").
class DeclaredFields {
 public:
  DeclaredFields() = default;
  explicit DeclaredFields(std::vector<std::string> paths) : paths_(std::move(paths)) {}

  bool all() const { return paths_.empty(); }
  const std::vector<std::string>& paths() const { return paths_; }
  // `path` is declared itself, or inside a declared path.
  bool Covers(std::string_view path) const;

 private:
  std::vector<std::string> paths_;
};

// The declared paths as the kind writes them, when every one is one of
// `writable` (leaf paths; "labels.*" admits any key of a map), a parent of
// some ("quota" of "quota.pods"), or inside one that is written whole
// ("capacity.mig" is "capacity"); otherwise INVALID_ARGUMENT naming the
// first other path, as output-only and unknown fields are not declared.
Result<DeclaredFields> CheckDeclaredPaths(const DeclaredFields& declared, std::string_view kind,
                                          std::initializer_list<std::string_view> writable);

// Appends a FieldChange for `path` when it is declared and the values differ.
void CompareField(std::vector<FieldChange>& changes, const DeclaredFields& declared, std::string_view path,
                  const std::string& live, const std::string& desired);
// The same for an optional number ("" when absent).
void CompareField(std::vector<FieldChange>& changes, const DeclaredFields& declared, std::string_view path,
                  const std::optional<std::int64_t>& live, const std::optional<std::int64_t>& desired);

// The four members of an API limits field ("api_limits.objects", ...).
void CompareApiLimits(std::vector<FieldChange>& changes, const DeclaredFields& declared, const tenancy::ApiLimits& live,
                      const tenancy::ApiLimits& desired);

// What a write has at hand: who asks, the transaction, the capacity
// session when the transaction reserves (CapacityLedger::Transact), and
// the time. A transaction body may run again (a serialization retry): the
// scope is made anew for each run.
struct WriteScope {
  const RequestContext& ctx;
  Tx& tx;
  CapacityLedger::Session* capacity;  // nullptr: the transaction reserves nothing
  TimePoint now;
  // An apply of a set writes: the set's gate settled ownership, so
  // GuardSetMember (apply_set_guard.h) lets it through.
  bool applying_set = false;
  // Tokens the authenticator must forget once the transaction has committed.
  std::vector<Revocation> forget{};
};

// Whether a write is kept, or only checked (AIP-163's validate_only): every
// rule runs — authorization, validation, quota, tier, placement — in a
// transaction that is rolled back (TxMode::kDryRun).
enum class WriteMode { kCommit, kValidateOnly };
inline TxMode TxModeOf(WriteMode mode) {
  return mode == WriteMode::kValidateOnly ? TxMode::kDryRun : TxMode::kReadWrite;
}

// What a committed transaction's scopes asked the authenticator to forget.
void ForgetAll(Authenticator& authenticator, const std::vector<Revocation>& forget);

// A resource kind: K::Object is what is declared and stored; an object's
// identity is its name fields (the others are ignored by Get).
template <class K>
concept ResourceKind = requires(const K& kind, const typename K::Object& object, const RequestContext& ctx, Tx& tx,
                                WriteScope& scope, const DeclaredFields& declared) {
  { K::kKind } -> std::convertible_to<std::string_view>;
  // Every declared path a writable field, as the kind writes it (CheckDeclaredPaths).
  { kind.CheckDeclared(declared) } -> std::same_as<Result<DeclaredFields>>;
  // "tenants/acme/vclusters/train": how plans, errors and audit name it.
  { kind.ResourceName(object) } -> std::same_as<std::string>;
  // What can be checked without the store: names, formats, bounds, and
  // whether ctx may write it at all. Each violation names its field.
  { kind.Validate(ctx, object) } -> std::same_as<Status>;
  { kind.Get(tx, object) } -> std::same_as<Result<std::optional<typename K::Object>>>;
  { kind.Create(scope, object) } -> std::same_as<Result<typename K::Object>>;
  // live as Get read it in this transaction; desired's declared fields win.
  // Writes nothing (no version, no audit) when nothing declared differs.
  { kind.Update(scope, object, object, declared) } -> std::same_as<Result<typename K::Object>>;
  { kind.Delete(scope, object) } -> std::same_as<Status>;
  // Declared writable fields whose values differ; never an output-only one.
  { kind.Diff(object, object, declared) } -> std::same_as<std::vector<FieldChange>>;
};

}  // namespace septa::core
