// What clients see when the database fails under a running septad, through
// REST and gRPC: the canonical code, a fixed message and the request id,
// never the database's URL, socket path, SQL or library text (issue 9 #11);
// and a stalled database answers a fast 503 with Retry-After instead of
// hanging the request (issue 9 #10), within db_request_timeout even when the
// whole server is frozen (issue 28, "Also").
#include <grpcpp/grpcpp.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "septa/v1/tenant.grpc.pb.h"
#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Well-formed, but no such token exists: checking it needs the database.
const std::string kBogusToken = "septa_0123456789abcdef_" + std::string(43, 'A');

// Text of the server's internals a client must never see.
std::vector<std::string> InternalWords(const std::string& database_name) {
  return {database_name, "postgres", "host=", "/tmp", ".s.PGSQL", "SELECT", "ERROR", "pqxx", "relation", "42P01"};
}

void ExpectNoInternals(const std::string& text, const std::string& database_name) {
  for (const auto& word : InternalWords(database_name)) {
    EXPECT_EQ(text.find(word), std::string::npos) << "\"" << word << "\" leaked in: " << text;
  }
}

void Exec(const std::string& url, const std::string& sql) {
  pqxx::connection connection(url);
  pqxx::nontransaction tx(connection);
  tx.exec(sql);
}

class DatabaseFailureTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    if (HasFatalFailure()) return;
    database_name_ = db_->name();
    url_ = db_->url();
    channel_ =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(app_->grpc_port()), grpc::InsecureChannelCredentials());
    tenants_ = v1::TenantService::NewStub(channel_);
  }

  // Calls GetTenant over gRPC with `token` and a request id of ours.
  grpc::health::v1::HealthCheckResponse::ServingStatus HealthOf(const std::string& service) {
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status status = grpc::health::v1::Health::NewStub(channel_)->Check(&ctx, req, &resp);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return resp.status();
  }

  grpc::Status GrpcGetTenant(const std::string& token, const std::string& name, const std::string& request_id) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    ctx.AddMetadata("x-request-id", request_id);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetTenantRequest request;
    request.set_name(name);
    v1::Tenant out;
    return tenants_->GetTenant(&ctx, request, &out);
  }

  static std::string RequestIdOf(const grpc::Status& status) {
    google::rpc::Status details;
    EXPECT_TRUE(details.ParseFromString(status.error_details()));
    for (const auto& any : details.details()) {
      google::rpc::RequestInfo info;
      if (any.UnpackTo(&info)) return info.request_id();
    }
    return "";
  }

  std::string database_name_;
  std::string url_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TenantService::Stub> tenants_;
};

TEST_F(DatabaseFailureTest, AnUnreachableDatabaseIsA503WithoutItsAddress) {
  db_.reset();  // drops the database and cuts septad's sessions: nothing can connect any more

  auto rest = Call(kBogusToken, "GET", "/v1/tenants", "", {{"X-Request-Id", "probe-rest-1"}});
  EXPECT_EQ(rest.status, 503) << rest.body;
  const json problem = json::parse(rest.body);
  EXPECT_EQ(problem["code"], "UNAVAILABLE");
  EXPECT_EQ(problem["request_id"], "probe-rest-1");
  EXPECT_FALSE(problem["message"].get<std::string>().empty());
  ExpectNoInternals(rest.body, database_name_);

  auto ready = http_->Send("GET", "/readyz");
  EXPECT_EQ(ready.status, 503);
  ExpectNoInternals(ready.body, database_name_);

  const grpc::Status grpc = GrpcGetTenant(kBogusToken, "acme", "probe-grpc-1");
  EXPECT_EQ(grpc.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(grpc.error_message().empty());
  ExpectNoInternals(grpc.error_message(), database_name_);
  ExpectNoInternals(grpc.error_details(), database_name_);
  EXPECT_EQ(RequestIdOf(grpc), "probe-grpc-1");

  // gRPC's health service says what /readyz says; septad is still alive.
  EXPECT_EQ(HealthOf(""), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(HealthOf("septa.v1.TenantService"), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(HealthOf("liveness"), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(http_->Send("GET", "/healthz").status, 200);
}

TEST_F(DatabaseFailureTest, AnInternalErrorCarriesNoSqlButClientErrorsKeepTheirText) {
  CreateTenant("acme");
  auto missing = Call(admin_, "GET", "/v1/tenants/nobody");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(json::parse(missing.body)["message"].get<std::string>().find("nobody"), std::string::npos) << missing.body;
  const grpc::Status grpc_missing = GrpcGetTenant(admin_, "nobody", "probe-grpc-2");
  EXPECT_EQ(grpc_missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(grpc_missing.error_message().find("nobody"), std::string::npos) << grpc_missing.error_message();

  // A schema septad does not expect: every tenant query now fails inside PostgreSQL.
  Exec(url_, "ALTER TABLE tenants RENAME TO tenants_elsewhere");

  auto rest = Call(admin_, "GET", "/v1/tenants/acme", "", {{"X-Request-Id", "probe-rest-2"}});
  EXPECT_EQ(rest.status, 500) << rest.body;
  const json problem = json::parse(rest.body);
  EXPECT_EQ(problem["code"], "INTERNAL");
  EXPECT_EQ(problem["request_id"], "probe-rest-2");
  ExpectNoInternals(rest.body, database_name_);

  const grpc::Status grpc = GrpcGetTenant(admin_, "acme", "probe-grpc-3");
  EXPECT_EQ(grpc.error_code(), grpc::StatusCode::INTERNAL);
  ExpectNoInternals(grpc.error_message(), database_name_);
  ExpectNoInternals(grpc.error_details(), database_name_);
  EXPECT_EQ(RequestIdOf(grpc), "probe-grpc-3");
}

// Holds an exclusive lock on `table` from a connection of its own until
// released (or, as a safety net for a broken server, after 10 s), so that
// septad's queries on it wait.
class TableLock {
 public:
  TableLock(const std::string& url, const std::string& table) : connection_(url), tx_(connection_) {
    tx_.exec("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE");
    holder_ = std::thread([this] {
      released_.get_future().wait_for(std::chrono::seconds(10));
      tx_.abort();
    });
  }
  ~TableLock() { Release(); }
  void Release() {
    if (!holder_.joinable()) return;
    released_.set_value();
    holder_.join();
  }

 private:
  pqxx::connection connection_;
  pqxx::work tx_;
  std::promise<void> released_;
  std::thread holder_;
};

// Waits until some session of `url` waits for a lock, or `limit` passes.
bool SomeoneWaitsForALock(const std::string& url, milliseconds limit) {
  pqxx::connection connection(url);
  const auto deadline = steady_clock::now() + limit;
  do {
    pqxx::nontransaction tx(connection);
    // Only this test's database: tests running beside it wait for locks too.
    if (tx.exec1("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                 " WHERE NOT l.granted AND a.datname = current_database()")[0]
            .as<int>() > 0) {
      return true;
    }
  } while (steady_clock::now() < deadline);
  return false;
}

class StatementTimeoutTest : public DatabaseFailureTest {
  void Configure(config::Config& config) override { config.db_statement_timeout = milliseconds(300); }
};

TEST_F(StatementTimeoutTest, AQueryStuckBehindALockIsAFast503WithRetryAfter) {
  CreateTenant("acme");
  TableLock lock(url_, "tenants");
  const auto started = steady_clock::now();
  auto rest = Call(admin_, "GET", "/v1/tenants/acme", "", {{"X-Request-Id", "stalled-1"}});
  const auto took = steady_clock::now() - started;
  EXPECT_EQ(rest.status, 503) << rest.body;
  EXPECT_FALSE(rest.header("retry-after").empty());
  EXPECT_LT(took, milliseconds(3000));
  ExpectNoInternals(rest.body, database_name_);

  const auto grpc_started = steady_clock::now();
  EXPECT_EQ(GrpcGetTenant(admin_, "acme", "stalled-2").error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_LT(steady_clock::now() - grpc_started, milliseconds(3000));

  lock.Release();
  EXPECT_EQ(Call(admin_, "GET", "/v1/tenants/acme").status, 200);
}

class AcquireTimeoutTest : public DatabaseFailureTest {
  void Configure(config::Config& config) override {
    config.db_pool_size = 1;
    config.db_statement_timeout = std::chrono::seconds(20);
    config.db_acquire_timeout = milliseconds(300);
  }
};

TEST_F(AcquireTimeoutTest, ABusyPoolIsAFast503WithRetryAfter) {
  CreateTenant("acme");
  TableLock lock(url_, "tenants");
  // The pool's only connection waits on the lock in a request of its own.
  HttpClient other(app_->http_port());
  auto stuck = std::async(std::launch::async, [&] {
    return other.Send("GET", "/v1/tenants/acme", "", {{"Authorization", "Bearer " + admin_}});
  });
  ASSERT_TRUE(SomeoneWaitsForALock(url_, std::chrono::seconds(5)));

  const auto started = steady_clock::now();
  auto rest = Call(admin_, "GET", "/v1/trust-tiers");
  const auto took = steady_clock::now() - started;
  EXPECT_EQ(rest.status, 503) << rest.body;
  EXPECT_FALSE(rest.header("retry-after").empty());
  EXPECT_LT(took, milliseconds(3000));

  lock.Release();
  EXPECT_EQ(stuck.get().status, 200);
}

// The processes of the PostgreSQL server whose postmaster is `postmaster`:
// it and its children (backends, checkpointer, ...). /proc/<pid>/stat is
// "pid (comm) state ppid ...", comm possibly holding spaces and parentheses.
std::vector<pid_t> ServerProcesses(pid_t postmaster) {
  std::vector<pid_t> out{postmaster};
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    char state = 0;
    pid_t parent = 0;
    if (rest >> state >> parent && parent == postmaster) out.push_back(std::stoi(name));
  }
  return out;
}

// SIGSTOPs a whole PostgreSQL server, the postmaster first so that it forks
// nothing new, as a host that froze would: connects queue in the socket's
// backlog and nothing answers. SIGCONT at Thaw, at the end of the scope, or
// after 60 s as a safety net should septad hang (the test then fails on time).
class FrozenServer {
 public:
  explicit FrozenServer(pid_t postmaster) {
    EXPECT_EQ(kill(postmaster, SIGSTOP), 0);
    processes_ = ServerProcesses(postmaster);
    for (pid_t p : processes_) EXPECT_EQ(kill(p, SIGSTOP), 0) << p;
    safety_net_ = std::thread([this, thawed = thawed_.get_future()] {
      thawed.wait_for(std::chrono::seconds(60));
      for (pid_t p : processes_) kill(p, SIGCONT);
    });
  }
  ~FrozenServer() { Thaw(); }
  void Thaw() {
    if (!safety_net_.joinable()) return;
    thawed_.set_value();
    safety_net_.join();
  }
  std::size_t size() const { return processes_.size(); }

 private:
  std::vector<pid_t> processes_;
  std::promise<void> thawed_;
  std::thread safety_net_;
};

constexpr milliseconds kRequestTimeout{1500};
constexpr milliseconds kReadyTimeout{500};
// Scheduling on a busy 2-core machine; far below what any unbounded wait
// takes (a cut after 2 x db_statement_timeout = 10 s, connect_timeout 5 s).
constexpr milliseconds kMargin{1000};

// septad on its own embedded PostgreSQL (the test run's server is shared by
// every test): the server can be frozen whole.
class FrozenDatabaseTest : public DatabaseFailureTest {
  void Configure(config::Config& config) override {
    config.database_url.clear();
    config.db_request_timeout = kRequestTimeout;
    config.db_ready_timeout = kReadyTimeout;
  }

 protected:
  pid_t Postmaster() const {
    std::ifstream pid_file(std::filesystem::path(data_dir_) / "postgres/data/postmaster.pid");
    pid_t pid = 0;
    pid_file >> pid;
    return pid;
  }

  // Runs `call` and says how long it took.
  template <typename F>
  static milliseconds Timed(F&& call) {
    const auto started = steady_clock::now();
    call();
    return std::chrono::duration_cast<milliseconds>(steady_clock::now() - started);
  }
};

// With the whole server frozen, every request answers 503 within
// db_request_timeout, however its waits fall: a statement on a pooled
// connection (cut at the deadline), connecting anew (abandoned at the
// deadline), the token's lookup and the use case's transaction together;
// /readyz within db_ready_timeout. It took 15 s (a statement cut at twice
// db_statement_timeout, then a reconnect waiting out connect_timeout) and
// /readyz 5 s. Once thawed, septad serves again by itself.
TEST_F(FrozenDatabaseTest, EveryRequestEndsByItsDeadlineWhileTheServerIsFrozen) {
  CreateTenant("acme");
  const std::string owner = CreateToken("tenant:acme", "owner");   // never used yet: its lookup needs the database
  ASSERT_EQ(Call(admin_, "GET", "/v1/tenants/acme").status, 200);  // the admin token cached, connections pooled
  const pid_t postmaster = Postmaster();
  ASSERT_GT(postmaster, 0);
  FrozenServer frozen(postmaster);
  EXPECT_GE(frozen.size(), 3u);

  HttpResult pooled;
  const milliseconds on_pooled = Timed([&] { pooled = Call(admin_, "GET", "/v1/tenants/acme"); });
  EXPECT_EQ(pooled.status, 503) << pooled.body;
  EXPECT_FALSE(pooled.header("retry-after").empty());
  EXPECT_LT(on_pooled, kRequestTimeout + kMargin) << "a statement on a pooled connection";

  HttpResult connecting;
  const milliseconds on_connect = Timed([&] { connecting = Call(owner, "GET", "/v1/tenants/acme"); });
  EXPECT_EQ(connecting.status, 503) << connecting.body;
  EXPECT_LT(on_connect, kRequestTimeout + kMargin) << "a new connection for the token's lookup";

  grpc::Status grpc;
  const milliseconds on_grpc = Timed([&] { grpc = GrpcGetTenant(owner, "acme", "frozen-grpc"); });
  EXPECT_EQ(grpc.error_code(), grpc::StatusCode::UNAVAILABLE) << grpc.error_message();
  EXPECT_LT(on_grpc, kRequestTimeout + kMargin) << "gRPC";

  HttpResult ready;
  const milliseconds on_ready = Timed([&] { ready = http_->Send("GET", "/readyz"); });
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_LT(on_ready, kReadyTimeout + kMargin) << "/readyz";
  grpc::health::v1::HealthCheckResponse::ServingStatus health{};
  const milliseconds on_health = Timed([&] { health = HealthOf(""); });
  EXPECT_EQ(health, grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_LT(on_health, kReadyTimeout + kMargin) << "gRPC health";
  EXPECT_EQ(http_->Send("GET", "/healthz").status, 200);  // the server runs: stopped, not dead
  std::printf(
      "frozen server: 503 after %lld ms (pooled), %lld ms (connecting), %lld ms (gRPC); "
      "/readyz after %lld ms, gRPC health after %lld ms\n",
      static_cast<long long>(on_pooled.count()), static_cast<long long>(on_connect.count()),
      static_cast<long long>(on_grpc.count()), static_cast<long long>(on_ready.count()),
      static_cast<long long>(on_health.count()));

  frozen.Thaw();
  int ready_again = 0;
  for (int attempt = 0; attempt < 50 && ready_again != 200; ++attempt) {
    ready_again = http_->Send("GET", "/readyz").status;  // each answers within kReadyTimeout
  }
  EXPECT_EQ(ready_again, 200);
  EXPECT_EQ(Call(owner, "GET", "/v1/tenants/acme").status, 200);
}

}  // namespace
}  // namespace septa::test
