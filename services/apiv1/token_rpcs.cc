// TokenService over core::TokenService.
#include <google/protobuf/empty.pb.h>

#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

void AddTokenRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::CreateTokenRequest>(
      [uc](const core::RequestContext& ctx, const v1::CreateTokenRequest& req) -> Result<v1::ApiToken> {
        SEPTA_ASSIGN_OR_RETURN(const core::IssuedToken issued, uc.tokens.Create(ctx, TokenRequestFromProto(req)));
        v1::ApiToken out = ToProto(issued.token);
        out.set_token(issued.secret_text);  // the only time it is shown
        return out;
      });
  handlers.Add<v1::ListTokensRequest>(
      [uc](const core::RequestContext& ctx, const v1::ListTokensRequest&) -> Result<v1::ListTokensResponse> {
        SEPTA_ASSIGN_OR_RETURN(const std::vector<core::ApiToken> tokens, uc.tokens.List(ctx));
        v1::ListTokensResponse out;
        for (const auto& t : tokens) *out.add_tokens() = ToProto(t);
        return out;
      });
  handlers.Add<v1::ExchangeTokenRequest>(
      [uc](const core::RequestContext& ctx, const v1::ExchangeTokenRequest& req) -> Result<v1::ExchangeTokenResponse> {
        SEPTA_ASSIGN_OR_RETURN(const core::ExchangedToken exchanged,
                               uc.token_exchange.Exchange(ctx, core::ExchangeRequest{
                                                                   .grant_type = req.grant_type(),
                                                                   .subject_token = req.subject_token(),
                                                                   .subject_token_type = req.subject_token_type(),
                                                                   .requested_token_type = req.requested_token_type(),
                                                               }));
        v1::ExchangeTokenResponse out;
        out.set_access_token(exchanged.issued.secret_text);  // the only time it is shown
        out.set_issued_token_type(core::kAccessTokenType);
        out.set_token_type("Bearer");
        out.set_expires_in(static_cast<std::int32_t>(exchanged.expires_in.count()));
        *out.mutable_issued() = ToProto(exchanged.issued.token);
        return out;
      });
  handlers.Add<v1::RevokeTokenRequest>(
      [uc](const core::RequestContext& ctx, const v1::RevokeTokenRequest& req) -> Result<google::protobuf::Empty> {
        SEPTA_RETURN_IF_ERROR(uc.tokens.Revoke(ctx, req.id()));
        return google::protobuf::Empty();
      });
}

}  // namespace septa::apiv1
