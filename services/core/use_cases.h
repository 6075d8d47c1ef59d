// Everything a transport needs to serve API v1, wired once by septad (or a
// test) and handed to REST and gRPC alike.
#pragma once

#include <chrono>

#include "common/clock.h"
#include "services/core/apply_service.h"
#include "services/core/auth.h"
#include "services/core/credential_service.h"
#include "services/core/inventory_service.h"
#include "services/core/member_service.h"
#include "services/core/people.h"
#include "services/core/person_sign_in.h"
#include "services/core/probes.h"
#include "services/core/session_service.h"
#include "services/core/store.h"
#include "services/core/tenant_service.h"
#include "services/core/tier_service.h"
#include "services/core/token_exchange.h"
#include "services/core/token_service.h"
#include "services/core/usage_service.h"
#include "services/core/virtual_cluster_service.h"
#include "services/core/virtual_pods.h"

namespace septa::core {

struct UseCases {
  Store& store;
  Authenticator& authenticator;
  PeopleAuthenticator& people;  // people's ID tokens, acting by their memberships
  TenantService& tenants;
  MemberService& members;  // tenant members: users and groups of the identity providers
  TrustTierService& tiers;
  TokenService& tokens;
  TokenExchangeService& token_exchange;  // a pipeline's OIDC token for a Septa token
  SessionService& sessions;              // the portal's sign-in (REST only: cookies)
  // People's sign-in to the portal at an identity provider; null when no
  // oidc_issuers entry has the portal's client (client_secret_file).
  PersonSignIn* person_sign_in;
  VirtualPodService& pods;
  RandomSource& random;  // request ids
  Probes& probes;        // /healthz, /readyz, grpc.health.v1
  InventoryService& inventory;
  VirtualClusterService& vclusters;
  CredentialService& credentials;
  ApplyService& apply;  // GitOps' Diff and Apply
  UsageService& usage;  // GPU usage, hoarders and prices
  // How long one request may wait on the database altogether
  // (db_request_timeout): the transports open a DeadlineScope of it.
  std::chrono::milliseconds db_request_timeout;
};

}  // namespace septa::core
