#include "services/core/person_sign_in.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>

#include "common/text.h"
#include "services/base/mac.h"
#include "services/core/audit.h"
#include "services/core/crypto.h"
#include "services/core/session_service.h"

namespace septa::core {

namespace {

constexpr std::size_t kMaxReturnToBytes = 2048;
// The random parts of a sign-in: 256 bits each.
constexpr std::size_t kFlowSecretBytes = 32;

// What a person's session record in the audit says: the person, as a
// session has no principal (it acts per request as its memberships give).
AuditRecord PersonAudit(const std::string& user, const std::string& request_id, TimePoint now, std::string action,
                        const std::string& session_id, std::string old_etag, std::string new_etag) {
  RequestContext ctx;
  ctx.request_id = request_id;
  ctx.surface = Surface::kPortal;
  AuditRecord record =
      AuditOf(ctx, now, std::move(action), SessionResource(session_id), std::move(old_etag), std::move(new_etag));
  record.principal = "user:" + user;
  return record;
}

Person PersonOfSession(const PersonSession& session) {
  return Person{.issuer = session.issuer,
                .user = session.user,
                .groups = session.groups,
                .expire_time = session.identity_expire_time};
}

}  // namespace

Status CheckReturnTo(std::string_view field, std::string_view return_to) {
  const auto refuse = [&](std::string_view why) {
    return InvalidField(std::string(field),
                        "must be a path of the portal (" + std::string(why) + "), not " + QuotedExcerpt(return_to));
  };
  if (return_to.empty() || return_to.front() != '/') return refuse("starting with /");
  // "//host" and "/\host" are another host to a browser.
  if (return_to.size() > 1 && (return_to[1] == '/' || return_to[1] == '\\')) return refuse("not //host or /\\host");
  if (return_to.size() > kMaxReturnToBytes) return refuse("at most 2 KiB");
  if (!std::all_of(return_to.begin(), return_to.end(), [](char c) { return c > 0x20 && c < 0x7f && c != '\\'; })) {
    return refuse("printable ASCII without spaces or backslashes");
  }
  return Status::Ok();
}

std::string_view SignInFailureName(SignInFailure failure) {
  switch (failure) {
    case SignInFailure::kExpired: return "expired";
    case SignInFailure::kBrowserMismatch: return "browser_mismatch";
    case SignInFailure::kDenied: return "denied";
    case SignInFailure::kProviderUnavailable: return "provider_unavailable";
    case SignInFailure::kRefused: return "refused";
  }
  return "refused";
}

PersonSignIn::PersonSignIn(Store& store, const Clock& clock, RandomSource& random, SignInProviders& providers,
                           PersonTokenVerifier& verifier, PersonSignInLimits limits)
    : store_(store), clock_(clock), random_(random), providers_(providers), verifier_(verifier), limits_(limits) {}

Result<BegunSignIn> PersonSignIn::Begin(const std::string& issuer, const std::string& return_to,
                                        const std::string& redirect_uri, const std::string& client,
                                        const std::string& request_id) {
  const std::vector<SignInProviderInfo> known = providers_.List();
  if (std::none_of(known.begin(), known.end(), [&](const SignInProviderInfo& p) { return p.issuer == issuer; })) {
    return InvalidArgument("issuer " + QuotedExcerpt(issuer) +
                           " signs no one in to the portal (GET /v1/sessions/providers lists those that do)");
  }
  SEPTA_RETURN_IF_ERROR(CheckReturnTo("return_to", return_to));
  SEPTA_ASSIGN_OR_RETURN(const std::string state, RandomBase64Url(random_, kFlowSecretBytes));
  SEPTA_ASSIGN_OR_RETURN(const std::string nonce, RandomBase64Url(random_, kFlowSecretBytes));
  SEPTA_ASSIGN_OR_RETURN(const std::string verifier, RandomBase64Url(random_, kFlowSecretBytes));
  SEPTA_ASSIGN_OR_RETURN(const std::string binding, RandomBase64Url(random_, kFlowSecretBytes));
  SEPTA_ASSIGN_OR_RETURN(
      const std::string url,
      providers_.AuthorizationUrl(issuer, AuthorizationRequest{.redirect_uri = redirect_uri,
                                                               .state = state,
                                                               .nonce = nonce,
                                                               .code_challenge = Sha256Base64Url(verifier)}));
  const TimePoint now = clock_.Now();
  const PendingSignIn pending{.state_hash = Sha256Hex(state),
                              .issuer = issuer,
                              .browser_hash = Sha256Hex(binding),
                              .code_verifier = verifier,
                              .nonce = nonce,
                              .return_to = return_to,
                              .client = client,
                              .create_time = now,
                              .expire_time = now + limits_.sign_in_ttl};
  SEPTA_RETURN_IF_ERROR(store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    SEPTA_ASSIGN_OR_RETURN(const int from_client, tx.PersonSessions().CountSignInsFrom(client, now));
    if (from_client >= limits_.pending_per_client_max) {
      return ResourceExhausted(std::to_string(from_client) +
                               " sign-ins begun from this address are under way, the limit: finish one or try again "
                               "in a few minutes");
    }
    SEPTA_ASSIGN_OR_RETURN(const int under_way, tx.PersonSessions().CountSignIns(now));
    if (under_way >= limits_.pending_max) {
      return ResourceExhausted(std::to_string(under_way) +
                               " sign-ins are under way, the limit: try again in a few minutes");
    }
    return tx.PersonSessions().InsertSignIn(pending);
  }));
  spdlog::debug("sign-in: request_id={} began at {}", request_id, issuer);
  return BegunSignIn{.authorization_url = url, .browser_binding = binding};
}

SignInOutcome PersonSignIn::Finish(const SignInCallback& callback, std::string_view browser_binding,
                                   const std::string& redirect_uri, const std::string& request_id) {
  const auto fail = [](SignInFailure failure, std::string reason) {
    return SignInOutcome{.opened = std::nullopt, .failure = failure, .reason = std::move(reason)};
  };
  if (callback.state.empty()) return fail(SignInFailure::kExpired, "the callback has no state");
  // Spent first, whatever follows: a callback is never taken twice.
  auto pending = TransactFor(store_, TxMode::kReadWrite,
                             [&](Tx& tx) { return tx.PersonSessions().TakeSignIn(Sha256Hex(callback.state)); });
  if (IsNotFound(pending)) {
    return fail(SignInFailure::kExpired, "no sign-in under way has this state (used already, expired or made up)");
  }
  if (!pending.ok()) return fail(SignInFailure::kProviderUnavailable, "the store: " + pending.status().message());
  if (clock_.Now() >= pending->expire_time) return fail(SignInFailure::kExpired, "the sign-in under way had expired");
  if (!base::ConstantTimeEquals(Sha256Hex(browser_binding), pending->browser_hash)) {
    return fail(SignInFailure::kBrowserMismatch, "the callback came without the cookie of the browser that began it");
  }
  if (!callback.error.empty()) {
    return fail(SignInFailure::kDenied, "the provider answered error " + QuotedExcerpt(callback.error));
  }
  if (callback.code.empty()) return fail(SignInFailure::kRefused, "the callback has neither code nor error");
  auto tokens = providers_.RedeemCode(pending->issuer, callback.code, pending->code_verifier, redirect_uri);
  if (!tokens.ok()) {
    return fail(
        tokens.status().code() == Code::kUnavailable ? SignInFailure::kProviderUnavailable : SignInFailure::kRefused,
        tokens.status().message());
  }
  auto person = verifier_.VerifySignIn(tokens->id_token, pending->nonce);
  if (!person.ok()) {
    return fail(
        person.status().code() == Code::kUnavailable ? SignInFailure::kProviderUnavailable : SignInFailure::kRefused,
        "its ID token: " + person.status().message());
  }
  auto opened = Open(*person, *tokens, *pending, request_id);
  if (!opened.ok()) return fail(SignInFailure::kRefused, opened.status().message());
  return SignInOutcome{.opened = *std::move(opened), .failure = SignInFailure::kRefused, .reason = ""};
}

Result<OpenedSession> PersonSignIn::Open(const Person& person, const ProviderTokens& tokens,
                                         const PendingSignIn& pending, const std::string& request_id) {
  SEPTA_ASSIGN_OR_RETURN(const std::string id, RandomHex(random_, kTokenIdBytes));
  SEPTA_ASSIGN_OR_RETURN(const std::string secret, RandomBase64Url(random_, kTokenSecretBytes));
  const TimePoint now = clock_.Now();
  PersonSession session{.id = id,
                        .secret_hash = Sha256Hex(secret),
                        .issuer = person.issuer,
                        .user = person.user,
                        .groups = person.groups,
                        .identity_expire_time = person.expire_time,
                        .id_token = tokens.id_token,
                        .refresh_token = tokens.refresh_token,
                        .version = 0,
                        .create_time = now,
                        .expire_time = now + limits_.session_ttl,
                        .revoke_time = std::nullopt};
  // Without a refresh token the identity cannot be renewed: the session
  // ends with its ID token.
  if (session.refresh_token.empty()) session.expire_time = std::min(session.expire_time, person.expire_time);
  std::vector<std::string> ended;
  SEPTA_RETURN_IF_ERROR(store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    ended.clear();
    SEPTA_ASSIGN_OR_RETURN(const std::vector<PersonSession> live,
                           tx.PersonSessions().ListLive(person.issuer, person.user, now));
    // The oldest beyond the bound end: a browser that signs in again must
    // not lock its person out.
    for (std::size_t i = 0; i + static_cast<std::size_t>(limits_.live_max) <= live.size(); ++i) {
      SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Revoke(live[i].id, now));
      SEPTA_RETURN_IF_ERROR(
          tx.Audit().Append(PersonAudit(person.user, request_id, now, "session.evict", live[i].id, "1", "")));
      ended.push_back(live[i].id);
    }
    SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(session));
    return tx.Audit().Append(PersonAudit(person.user, request_id, now, "session.create", session.id, "", "1"));
  }));
  {
    std::lock_guard lock(mu_);
    for (const std::string& gone : ended) cache_.erase(gone);
  }
  return OpenedSession{
      .session = session, .cookie_value = FormatPersonCookie(id, secret), .return_to = pending.return_to};
}

Result<PersonSession> PersonSignIn::Read(const std::string& id) {
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) { return tx.PersonSessions().Get(id); });
}

Result<PersonSession> PersonSignIn::Lookup(const std::string& id) {
  const TimePoint now = clock_.Now();
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(id);
    if (it != cache_.end() && now - it->second.fetched_at < limits_.cache_ttl) return it->second.session;
    generation = generation_;
  }
  SEPTA_ASSIGN_OR_RETURN(PersonSession session, Read(id));
  std::lock_guard lock(mu_);
  if (generation == generation_) {
    auto& slot = cache_[id];
    const std::optional<TimePoint> failed = slot.renew_failed_at;
    slot = Cached{session, now, failed};
  }
  return session;
}

Result<SignedInPerson> PersonSignIn::Authenticate(std::string_view cookie_value, const std::string& request_id) {
  const std::optional<ParsedTokenText> parsed = ParsePersonCookie(cookie_value);
  const Status invalid = Unauthenticated("invalid session");
  if (!parsed) return invalid;
  auto found = Lookup(parsed->id);
  if (IsNotFound(found)) return invalid;
  SEPTA_RETURN_IF_ERROR(found);
  if (!base::ConstantTimeEquals(Sha256Hex(parsed->secret), found->secret_hash)) return invalid;
  const TimePoint now = clock_.Now();
  if (found->revoke_time) return Unauthenticated("session has been signed out");
  if (now >= found->expire_time) return Unauthenticated("session has expired: sign in again");
  SEPTA_ASSIGN_OR_RETURN(const PersonSession session, RenewIfDue(*std::move(found), request_id));
  return SignedInPerson{.session_id = session.id,
                        .person = std::make_shared<const Person>(PersonOfSession(session)),
                        .expire_time = session.expire_time};
}

std::mutex& PersonSignIn::RenewalLock(const std::string& id) {
  return renewal_locks_[std::hash<std::string>{}(id) % renewal_locks_.size()];
}

Result<PersonSession> PersonSignIn::RenewIfDue(PersonSession session, const std::string& request_id) {
  const TimePoint now = clock_.Now();
  if (now < session.identity_expire_time) return session;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(session.id);
    if (it != cache_.end() && it->second.renew_failed_at && now - *it->second.renew_failed_at < limits_.renew_retry) {
      return session;  // the provider did not answer a moment ago: the held identity serves
    }
  }
  std::lock_guard renewing(RenewalLock(session.id));
  // Another thread, or replica, may have renewed it while this one waited.
  SEPTA_ASSIGN_OR_RETURN(PersonSession current, Read(session.id));
  if (current.revoke_time) return Unauthenticated("session has been signed out");
  const auto remember = [&](const PersonSession& s, std::optional<TimePoint> failed_at) {
    std::lock_guard lock(mu_);
    cache_[s.id] = Cached{s, clock_.Now(), failed_at};
  };
  if (now < current.identity_expire_time) {
    remember(current, std::nullopt);
    return current;
  }
  const auto hold = [&](const std::string& why) -> Result<PersonSession> {
    spdlog::warn(
        "sign-in: request_id={} session {} of {} could not be renewed at {} (its identity is held until "
        "the next try): {}",
        request_id, current.id, current.user, current.issuer, why);
    remember(current, now);
    return current;
  };
  const auto end = [&](const std::string& why) -> Status {
    spdlog::info("sign-in: request_id={} session {} of {} ended at its renewal: {}", request_id, current.id,
                 current.user, why);
    SEPTA_RETURN_IF_ERROR(End(current, "session.end", request_id));
    return Unauthenticated("the identity provider ended this sign-in: sign in again");
  };
  auto tokens = providers_.Refresh(current.issuer, current.refresh_token);
  if (!tokens.ok()) {
    if (tokens.status().code() == Code::kUnauthenticated) return end(tokens.status().message());
    return hold(tokens.status().message());
  }
  auto person = verifier_.VerifyPerson(tokens->id_token);
  if (!person.ok()) {
    if (person.status().code() == Code::kUnavailable) return hold(person.status().message());
    return end("its renewed ID token: " + person.status().message());
  }
  if (person->user != current.user) {
    return end("the renewed ID token names " + QuotedExcerpt(person->user) + ", not the session's person");
  }
  PersonSession renewed = current;
  renewed.groups = person->groups;
  renewed.identity_expire_time = person->expire_time;
  renewed.id_token = tokens->id_token;
  if (!tokens->refresh_token.empty()) renewed.refresh_token = tokens->refresh_token;
  renewed.version = current.version + 1;
  const Status stored = store_.Transact(
      TxMode::kReadWrite, [&](Tx& tx) { return tx.PersonSessions().UpdateIdentity(renewed, current.version); });
  if (stored.code() == Code::kAborted) {
    // Renewed elsewhere meanwhile: that renewal stands.
    SEPTA_ASSIGN_OR_RETURN(PersonSession theirs, Read(session.id));
    remember(theirs, std::nullopt);
    return theirs;
  }
  SEPTA_RETURN_IF_ERROR(stored);
  remember(renewed, std::nullopt);
  return renewed;
}

Status PersonSignIn::End(const PersonSession& session, std::string_view action, const std::string& request_id) {
  const TimePoint now = clock_.Now();
  SEPTA_RETURN_IF_ERROR(store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Revoke(session.id, now));
    return tx.Audit().Append(PersonAudit(session.user, request_id, now, std::string(action), session.id, "1", ""));
  }));
  std::lock_guard lock(mu_);
  cache_.erase(session.id);
  return Status::Ok();
}

Result<std::string> PersonSignIn::SignOut(const std::string& session_id, const std::string& post_logout_redirect_uri,
                                          const std::string& request_id) {
  SEPTA_ASSIGN_OR_RETURN(const PersonSession session, Read(session_id));
  if (!session.revoke_time) SEPTA_RETURN_IF_ERROR(End(session, "session.delete", request_id));
  // The provider's side is best effort: the session here has ended.
  if (!session.refresh_token.empty()) {
    if (Status st = providers_.RevokeRefreshToken(session.issuer, session.refresh_token); !st.ok()) {
      spdlog::warn("sign-in: request_id={} the refresh token of session {} could not be revoked at {}: {}", request_id,
                   session.id, session.issuer, st.message());
    }
  }
  auto url = providers_.EndSessionUrl(session.issuer, session.id_token, post_logout_redirect_uri);
  if (!url.ok()) {
    spdlog::warn("sign-in: request_id={} no logout at {} for session {}: {}", request_id, session.issuer, session.id,
                 url.status().message());
    return std::string();
  }
  return url;
}

void PersonSignIn::Forget(const Revocation& revocation) {
  std::lock_guard lock(mu_);
  ++generation_;
  if (revocation.token_id.empty() && revocation.principal.empty()) {
    cache_.clear();
  } else if (!revocation.token_id.empty()) {
    cache_.erase(revocation.token_id);
  }
}

}  // namespace septa::core
