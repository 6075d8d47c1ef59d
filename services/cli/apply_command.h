// septactl diff and septactl apply (docs/gitops.md): the ApplyRequest from
// the documents and the flags, the call, the plan or the refusal printed,
// and the exit code, which tells a pipeline what happened (GITOPS-FACTS
// §7.4): 0/1/2 as kubectl diff, Terraform's -detailed-exitcode and Flux
// use them, 3 for a plan that cannot be applied as it stands, 4 for an
// apply whose --wait ended before its virtual clusters were READY. And
// septactl applyset list / get, with the same 0/1/2.
#pragma once

#include <grpcpp/support/status.h>

#include <chrono>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "septa/v1/declarative.pb.h"
#include "services/cli/apply_documents.h"
#include "services/cli/invocation.h"
#include "services/cli/output.h"
#include "services/cli/septa_client.h"
#include "services/cli/vcluster_wait.h"

namespace septa::cli {

// diff: in sync. apply: applied, or nothing to do. applyset: read.
inline constexpr int kExitInSync = 0;
// diff: differences, all applicable. apply, only with --detailed-exitcode: changes applied.
// applyset get, only with --exit-code (as git diff --exit-code): OUT_OF_SYNC.
inline constexpr int kExitChanges = 1;
// The documents, the flags, auth, the transport or the server failed: nothing applied.
inline constexpr int kExitError = 2;
// A conflict, an unconfirmed deletion, a capacity, quota or tier refusal, a
// stale --plan: nothing applied.
inline constexpr int kExitNotApplicable = 3;
// apply --wait: applied, but a virtual cluster was not READY (a deleted one
// not gone) before --timeout, or one became FAILED (the wait ends then), or
// reading them failed.
inline constexpr int kExitWaitTimedOut = 4;

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
// `err`) and return the exit code. Apply with --wait then waits
// (WaitForApply), its progress on `err`, on `clock`.
int SendDiff(SeptaClient& client, const DiffCommand& command, const PreparedApply& prepared, OutputFormat format,
             std::string_view server, std::ostream& out, std::ostream& err);
int SendApply(SeptaClient& client, const ApplyCommand& command, const PreparedApply& prepared, OutputFormat format,
              std::string_view server, const Clock& clock, std::ostream& out, std::ostream& err);

// apply --wait: what to wait for after `plan` was applied. Each virtual
// cluster the plan created, updated or found unchanged until READY (an
// unchanged one may still be provisioning from an earlier apply whose wait
// gave up), each one it deleted until gone; trust tiers and tenants need
// no wait.
std::vector<WaitTarget> ApplyWaitTargets(const v1::ApplyPlan& plan);

// Waits for `targets` for at most `timeout`. On `err`: "waiting for N
// virtual clusters: NAME STATE, ..." whenever that changes, and at the end
// "waited for N virtual clusters: 2 READY, 1 gone" (kExitInSync), or why
// the wait ended early (one FAILED, DELETING or gone: at once) or gave up,
// a line per virtual cluster not ready with its state and its conditions
// not True (kExitWaitTimedOut).
int WaitForApply(std::vector<WaitTarget> targets, std::chrono::milliseconds timeout, const Clock& clock,
                 const ReadVirtualCluster& read, std::string_view server, std::ostream& err);

// applyset list and get: the caller's sets as `format` shows them; get's
// table is the set's row, then a row per member changed outside the set.
std::string ShowApplySets(const v1::ListApplySetsResponse& sets, OutputFormat format);
std::string ShowApplySet(const v1::ApplySet& set, OutputFormat format);
int SendApplySetList(SeptaClient& client, OutputFormat format, std::string_view server, std::ostream& out,
                     std::ostream& err);
// kExitInSync, or with --exit-code kExitChanges when the set is OUT_OF_SYNC;
// a failed call is kExitError.
int SendApplySetGet(SeptaClient& client, const ApplySetGet& command, OutputFormat format, std::string_view server,
                    std::ostream& out, std::ostream& err);

}  // namespace septa::cli
