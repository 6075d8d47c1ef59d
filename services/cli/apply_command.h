// septactl diff and septactl apply (docs/gitops.md): the ApplyRequest from
// the documents and the flags, the call, the plan or the refusal printed,
// and the exit code, which tells a pipeline what happened (GITOPS-FACTS
// §7.4): 0/1/2 as kubectl diff, Terraform's -detailed-exitcode and Flux
// use them, and 3 for a plan that cannot be applied as it stands.
#pragma once

#include <grpcpp/support/status.h>

#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "septa/v1/declarative.pb.h"
#include "services/cli/apply_documents.h"
#include "services/cli/invocation.h"
#include "services/cli/output.h"
#include "services/cli/septa_client.h"

namespace septa::cli {

// diff: in sync. apply: applied, or nothing to do.
inline constexpr int kExitInSync = 0;
// diff: differences, all applicable. apply, only with --detailed-exitcode: changes applied.
inline constexpr int kExitChanges = 1;
// The documents, the flags, auth, the transport or the server failed: nothing applied.
inline constexpr int kExitError = 2;
// A conflict, an unconfirmed deletion, a capacity, quota or tier refusal, a
// stale --plan: nothing applied.
inline constexpr int kExitNotApplicable = 3;

// The request a command sends, and where each of its objects came from.
struct PreparedApply {
  v1::ApplyRequest request;
  std::vector<DocumentPlace> places;  // places[i]: the document of request.objects(i)
  // Every problem found, a line each: when there is one, nothing is sent
  // and the command exits kExitError.
  std::vector<std::string> errors;
};

// The documents read (`in`: for -f -) into the request, with the flags.
PreparedApply PrepareDiff(const DiffCommand& command, std::istream* in);
// The same, and --plan's plan_etag as expected_plan_etag; a plan of
// another apply set is refused here.
PreparedApply PrepareApply(const ApplyCommand& command, std::istream* in);

int DiffExitCode(const v1::ApplyPlan& plan);
int ApplyExitCode(const v1::ApplyPlan& plan, bool detailed_exitcode);
// A failed Diff or Apply: kExitNotApplicable when the server refused what
// the documents ask (FAILED_PRECONDITION, ABORTED, RESOURCE_EXHAUSTED,
// ALREADY_EXISTS; PERMISSION_DENIED or INVALID_ARGUMENT naming objects[i]),
// kExitError otherwise.
int FailureExitCode(const grpc::Status& status);

// A failed call's lines for stderr: the error, then each field violation
// on its own line, one that names objects[i] told by that object's
// document ("  vc.yaml document 3 (VirtualCluster acme/train): capacity:
// ...").
std::string FailureLines(const grpc::Status& status, std::string_view server, const std::vector<DocumentPlace>& places);

// Send the prepared request, print the plan on `out` (or the failure on
// `err`) and return the exit code.
int SendDiff(SeptaClient& client, const DiffCommand& command, const PreparedApply& prepared, OutputFormat format,
             std::string_view server, std::ostream& out, std::ostream& err);
int SendApply(SeptaClient& client, const ApplyCommand& command, const PreparedApply& prepared, OutputFormat format,
              std::string_view server, std::ostream& out, std::ostream& err);

}  // namespace septa::cli
