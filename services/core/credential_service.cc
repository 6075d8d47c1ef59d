#include "services/core/credential_service.h"

#include <ctime>

#include "common/duration.h"
#include "services/core/audit.h"
#include "services/core/kubeconfig.h"
#include "services/core/tenant_query.h"
#include "services/core/validation.h"
#include "services/core/virtual_cluster_kind.h"
#include "tenancy/names.h"
#include "tenancy/vcluster_roles.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::core {

namespace {

using tenancy::VirtualClusterState;

std::string ResourceOf(const std::string& tenant, const std::string& vcluster, const std::string& serial) {
  return tenancy::VirtualClusterResource(tenant, vcluster) + "/credentials/" + serial;
}

Result<const tenancy::VclusterRole*> FindRole(const std::string& role) {
  for (const tenancy::VclusterRole& r : tenancy::kVclusterRoles) {
    if (r.name == role) return &r;
  }
  return InvalidField(
      "role", (role.empty() ? std::string("is required") : "unknown role \"" + EscapeControlCharacters(role) + "\"") +
                  "; one of admin, edit, view");
}

// No credential is issued for a suspended tenant's virtual clusters, by
// anyone: their APIs would refuse it anyway.
Result<Tenant> ActiveOwner(Tx& tx, const std::string& tenant) {
  auto owner = tx.Tenants().Get(tenant);
  SEPTA_RETURN_IF_ERROR(owner);
  if (owner->state == TenantState::kSuspended) {
    return FailedPrecondition("tenant \"" + tenant +
                              "\" is suspended: no credentials are issued for its virtual clusters until an admin "
                              "makes it ACTIVE again");
  }
  return owner;
}

Result<std::chrono::seconds> ParseTtl(const std::string& text) {
  auto ttl = ParseDuration("ttl", text);
  SEPTA_RETURN_IF_ERROR(ttl);
  if (ttl->count() <= 0) return InvalidField("ttl", "must be positive, not \"" + EscapeControlCharacters(text) + "\"");
  if (*ttl > kMaxCredentialTtl)
    return InvalidField("ttl", "must be at most 8760h (one year), not \"" + EscapeControlCharacters(text) + "\"");
  return *ttl;
}

}  // namespace

std::string CredentialUser(const Principal& principal) {
  const std::string who = principal.admin ? "admin" : principal.tenant;
  return principal.token_id.empty() ? who : who + ":" + principal.token_id;
}

Result<IssuedKubeconfig> CredentialService::IssueKubeconfig(const RequestContext& ctx, const std::string& tenant,
                                                            const std::string& vcluster,
                                                            const KubeconfigRequest& request) {
  SEPTA_RETURN_IF_ERROR(CheckMaySeeVirtualCluster(ctx, tenant, vcluster));
  SEPTA_RETURN_IF_ERROR(RequireNotSuspended(ctx.principal, "issue kubeconfigs"));
  auto role = FindRole(request.role);
  SEPTA_RETURN_IF_ERROR(role);
  if (ctx.principal.role == Role::kViewer && (*role)->name != "view") {
    return FieldError(Code::kPermissionDenied, "role",
                      "a viewer may only ask for role \"view\", not \"" + request.role + "\"");
  }
  std::optional<std::chrono::seconds> asked;
  if (!request.ttl.empty()) {
    auto ttl = ParseTtl(request.ttl);
    SEPTA_RETURN_IF_ERROR(ttl);
    asked = *ttl;
  }

  // What the certificate is for, read before it is issued.
  std::string endpoint;
  std::chrono::seconds cap{0};
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    auto vc = FindVirtualCluster(tx, tenant, vcluster);
    SEPTA_RETURN_IF_ERROR(vc);
    if (vc->state != VirtualClusterState::kReady || vc->endpoint.empty()) {
      return FailedPrecondition(DescribeVirtualCluster(tenant, vcluster) + " is " +
                                std::string(tenancy::VirtualClusterStateName(vc->state)) +
                                (vc->state == VirtualClusterState::kReady ? " without an endpoint yet" : "") +
                                ": credentials are issued for READY virtual clusters only");
    }
    endpoint = vc->endpoint;
    auto owner = ActiveOwner(tx, tenant);
    SEPTA_RETURN_IF_ERROR(owner);
    auto tier = tx.TrustTiers().Get(owner->trust_tier);
    SEPTA_RETURN_IF_ERROR(tier);
    cap = std::chrono::seconds(tier->credential_ttl_max_seconds);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  auto server_ca = server_ca_(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(server_ca);

  vault::ClientCertificateRequest issue;
  issue.tenant = tenant;
  issue.vcluster = vcluster;
  issue.user = CredentialUser(ctx.principal);
  issue.groups = {std::string((*role)->group)};
  issue.role = std::string((*role)->name);
  issue.ttl = asked.value_or(cap);
  issue.max_ttl = cap;
  auto certificate = issuer_.IssueClientCertificate(issue);
  SEPTA_RETURN_IF_ERROR(certificate);

  IssuedKubeconfig out;
  VclusterCredential& c = out.credential;
  c = {tenant,
       vcluster,
       certificate->serial,
       issue.user,
       issue.groups,
       issue.role,
       AuditPrincipal(ctx.principal),
       std::chrono::floor<std::chrono::microseconds>(certificate->not_before),
       std::chrono::floor<std::chrono::microseconds>(certificate->not_after),
       std::nullopt};
  st = store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    // Again where the row is written: a suspension committed since the
    // first read conflicts with this transaction, which then refuses.
    SEPTA_RETURN_IF_ERROR(ActiveOwner(tx, tenant));
    SEPTA_RETURN_IF_ERROR(tx.Credentials().Insert(c));
    return tx.Audit().Append(AuditOf(ctx, Now(clock_), "vcluster.credential.issue",
                                     ResourceOf(tenant, vcluster, c.serial), "",
                                     "role=" + c.role + " expire_time=" + FormatRfc3339(c.expire_time)));
  });
  if (!st.ok()) return st;
  out.ttl_capped = certificate->ttl_capped;
  out.kubeconfig = RenderKubeconfig(
      {.name = tenant + "-" + vcluster,
       .server = endpoint,
       .server_ca = *server_ca,
       .user = issue.user,
       .credential = KubeconfigClientCertificate{certificate->certificate_pem, certificate->private_key_pem}});
  return out;
}

namespace {

constexpr std::string_view kEveryVirtualCluster = "-";  // AIP-159
constexpr std::string_view kTenantCredentialsPage = "tenant-credentials:";
constexpr std::int64_t kMaxExpiringWithinSeconds = 365LL * 24 * 3600;

// A page of every virtual cluster's credentials resumes after (vcluster, serial).
std::string EncodeTenantCredentialsToken(const VclusterCredential& last) {
  return EncodeKeyPageToken(kTenantCredentialsPage, last.vcluster + "/" + last.serial);
}

Status DecodeTenantCredentialsToken(std::string_view token, CredentialQuery& query) {
  SEPTA_ASSIGN_OR_RETURN(const std::string key, DecodeKeyPageToken(kTenantCredentialsPage, token));
  const std::size_t slash = key.find('/');
  if (slash == std::string::npos) return InvalidField("page_token", "is not a token returned by a previous list");
  query.after_vcluster = key.substr(0, slash);
  query.after_serial = key.substr(slash + 1);
  return Status::Ok();
}

}  // namespace

Result<CredentialPage> CredentialService::List(const RequestContext& ctx, const std::string& tenant,
                                               const std::string& vcluster, const CredentialListing& listing) {
  const bool every = vcluster == kEveryVirtualCluster;
  if (every) {
    SEPTA_RETURN_IF_ERROR(CheckMaySeeTenant(ctx, tenant));
  } else {
    SEPTA_RETURN_IF_ERROR(CheckMaySeeVirtualCluster(ctx, tenant, vcluster));
  }
  if (listing.page_size < 0 || listing.page_size > kMaxPageSize) {
    return InvalidField("page_size", "must be between 1 and 500 (0 for the default of 50)");
  }
  if (listing.expiring_within_seconds < 0 || listing.expiring_within_seconds > kMaxExpiringWithinSeconds) {
    return InvalidField("expiring_within_seconds", "must be between 1 and 31536000 (0: no filter)");
  }
  CredentialQuery query{.tenant = tenant,
                        .vcluster = every ? "" : vcluster,
                        .limit = listing.page_size == 0 ? kDefaultPageSize : listing.page_size};
  if (!listing.page_token.empty()) {
    if (every) {
      SEPTA_RETURN_IF_ERROR(DecodeTenantCredentialsToken(listing.page_token, query));
    } else {
      SEPTA_ASSIGN_OR_RETURN(query.after_serial, DecodePageToken(listing.page_token));
    }
  }
  if (listing.expiring_within_seconds > 0) {
    const TimePoint now = Now(clock_);
    query.expiring = ExpiringWindow{now, now + std::chrono::seconds(listing.expiring_within_seconds)};
  }
  auto rows = TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<std::vector<VclusterCredential>> {
    if (every) {
      SEPTA_RETURN_IF_ERROR(tx.Tenants().Get(tenant));
    } else {
      SEPTA_RETURN_IF_ERROR(FindVirtualCluster(tx, tenant, vcluster));
    }
    // One row more than asked tells whether another page exists.
    CredentialQuery probe = query;
    probe.limit = query.limit + 1;
    return tx.Credentials().List(probe);
  });
  SEPTA_RETURN_IF_ERROR(rows);
  CredentialPage page{*std::move(rows), ""};
  if (static_cast<int>(page.credentials.size()) > query.limit) {
    page.credentials.resize(query.limit);
    const VclusterCredential& last = page.credentials.back();
    page.next_page_token = every ? EncodeTenantCredentialsToken(last) : EncodePageToken(last.serial);
  }
  return page;
}

Result<VclusterCredential> CredentialService::Revoke(const RequestContext& ctx, const std::string& tenant,
                                                     const std::string& vcluster, const std::string& serial) {
  SEPTA_RETURN_IF_ERROR(CheckMaySeeVirtualCluster(ctx, tenant, vcluster));
  SEPTA_RETURN_IF_ERROR(RequireWriter(ctx.principal, "revoke credentials"));
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<VclusterCredential> {
    const TimePoint now = Now(clock_);
    auto current = tx.Credentials().Get(tenant, vcluster, serial);
    if (IsNotFound(current)) {
      return NotFound("credential \"" + EscapeControlCharacters(serial) + "\" of " +
                      DescribeVirtualCluster(tenant, vcluster) + " not found");
    }
    SEPTA_RETURN_IF_ERROR(current);
    if (current->revoke_time) return current;
    SEPTA_ASSIGN_OR_RETURN(VclusterCredential revoked, tx.Credentials().Revoke(tenant, vcluster, serial, now));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append(
        AuditOf(ctx, now, "vcluster.credential.revoke", ResourceOf(tenant, vcluster, serial), "", "")));
    return revoked;
  });
}

Result<std::vector<std::string>> CredentialService::RevokedUnexpiredSerials(const std::string& tenant,
                                                                            const std::string& vcluster) {
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<std::vector<std::string>> {
    std::vector<std::string> serials;
    const TimePoint now = Now(clock_);
    CredentialQuery query{.tenant = tenant, .vcluster = vcluster, .limit = kMaxPageSize};
    for (;;) {
      SEPTA_ASSIGN_OR_RETURN(const std::vector<VclusterCredential> rows, tx.Credentials().List(query));
      for (const VclusterCredential& row : rows) {
        if (row.revoke_time && row.expire_time > now) serials.push_back(row.serial);
      }
      if (static_cast<int>(rows.size()) < query.limit) return serials;
      query.after_serial = rows.back().serial;
    }
  });
}

}  // namespace septa::core
