#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <sys/socket.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <future>

#include "services/http/server.h"
#include "services/http/tls.h"

namespace septa::http {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;

struct Pki {
  KeyPairPem ca, server, alice, foreign_ca, mallory, expired;
};

KeyPairPem MustIssue(const CertificateRequest& req, const KeyPairPem* issuer) {
  auto r = IssueCertificate(req, issuer);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : KeyPairPem{};
}

CertificateRequest Leaf(std::string cn, std::vector<std::string> orgs, std::chrono::hours valid_for = 24h) {
  auto now = std::chrono::system_clock::now();
  return CertificateRequest{std::move(cn), std::move(orgs), {"localhost"}, {"127.0.0.1"}, now - 1h, now + valid_for};
}

const Pki& TestPki() {
  static const Pki pki = [] {
    Pki p;
    auto now = std::chrono::system_clock::now();
    p.ca = MustIssue({"test-ca", {}, {}, {}, now - 1h, now + 24h, true}, nullptr);
    p.foreign_ca = MustIssue({"foreign-ca", {}, {}, {}, now - 1h, now + 24h, true}, nullptr);
    p.server = MustIssue(Leaf("server", {}), &p.ca);
    p.alice = MustIssue(Leaf("alice", {"dev", "ops"}), &p.ca);
    p.mallory = MustIssue(Leaf("mallory", {"system:masters"}), &p.foreign_ca);
    p.expired = MustIssue({"old", {}, {}, {}, now - 48h, now - 24h}, &p.ca);
    return p;
  }();
  return pki;
}

// Answers with "<CN>|<O>,<O>" or "anonymous".
std::unique_ptr<Server> StartTlsServer() {
  const Pki& pki = TestPki();
  auto ctx = MakeServerTlsContext({pki.server.certificate, pki.server.private_key, pki.ca.certificate, false});
  EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
  ServerOptions options;
  options.tls = *ctx;
  auto server = std::make_unique<Server>(options, [](Request&&, std::shared_ptr<Exchange> ex) {
    Response res{HttpStatus::ok, 11};
    const auto& peer = ex->connection().peer;
    if (!peer) {
      res.body() = "anonymous";
    } else {
      res.body() = peer->common_name + "|";
      for (std::size_t i = 0; i < peer->organizations.size(); ++i)
        res.body() += (i ? "," : "") + peer->organizations[i];
      EXPECT_NE(peer->certificate, nullptr);
    }
    EXPECT_TRUE(ex->connection().tls);
    ex->Reply(std::move(res));
  });
  EXPECT_TRUE(server->Start().ok());
  return server;
}

// Performs one GET over TLS; returns the body, or "error: ..." when the
// handshake or the exchange failed.
std::string TlsGet(std::uint16_t port, const KeyPairPem* client_cert) {
  ssl::context ctx(ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(TestPki().ca.certificate));
  ctx.set_verify_mode(ssl::verify_peer);
  if (client_cert != nullptr) {
    ctx.use_certificate_chain(net::buffer(client_cert->certificate));
    ctx.use_private_key(net::buffer(client_cert->private_key), ssl::context::pem);
  }
  net::io_context ioc;
  ssl::stream<net::ip::tcp::socket> stream(ioc, ctx);
  boost::system::error_code ec;
  stream.next_layer().connect({net::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return "error: connect " + ec.message();
  timeval tv{5, 0};
  setsockopt(stream.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  stream.handshake(ssl::stream_base::client, ec);
  if (ec) return "error: handshake " + ec.message();
  bhttp::request<bhttp::string_body> req{bhttp::verb::get, "/whoami", 11};
  req.set(bhttp::field::host, "localhost");
  bhttp::write(stream, req, ec);
  if (ec) return "error: write " + ec.message();
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(stream, buffer, res, ec);  // TLS 1.3 reports a refused certificate here
  if (ec) return "error: read " + ec.message();
  return res.body();
}

TEST(httpTls, ClientCertificateIdentityReachesTheHandler) {
  auto server = StartTlsServer();
  EXPECT_EQ(TlsGet(server->port(), &TestPki().alice), "alice|dev,ops");
}

TEST(httpTls, NoClientCertificateIsAnonymous) {
  auto server = StartTlsServer();
  EXPECT_EQ(TlsGet(server->port(), nullptr), "anonymous");
}

TEST(httpTls, ForeignClientCertificateIsRefused) {
  auto server = StartTlsServer();
  EXPECT_EQ(TlsGet(server->port(), &TestPki().mallory).rfind("error:", 0), 0u);
}

TEST(httpTls, ExpiredClientCertificateIsRefused) {
  auto server = StartTlsServer();
  EXPECT_EQ(TlsGet(server->port(), &TestPki().expired).rfind("error:", 0), 0u);
}

TEST(httpTls, PlainHttpToATlsPortIsDropped) {
  auto server = StartTlsServer();
  net::io_context ioc;
  net::ip::tcp::socket s(ioc);
  s.connect({net::ip::make_address("127.0.0.1"), server->port()});
  timeval tv{5, 0};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  net::write(s, net::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
  char buf[64];
  boost::system::error_code ec;
  std::size_t n = s.read_some(net::buffer(buf), ec);
  // Either closed outright or a TLS alert record (0x15) and then closed.
  EXPECT_TRUE(ec || (n > 0 && buf[0] == 0x15));
}

// accept_any_client_certificate: the handler gets the chain unverified and
// checks it against a CA of its choosing; answers "<verified peer?>|<what
// the test CA's verifier says>".
std::unique_ptr<Server> StartAcceptAnyServer() {
  const Pki& pki = TestPki();
  auto ctx = MakeServerTlsContext({.certificate_pem = pki.server.certificate,
                                   .private_key_pem = pki.server.private_key,
                                   .accept_any_client_certificate = true});
  EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
  ServerOptions options;
  options.tls = *ctx;
  auto server = std::make_unique<Server>(options, [](Request&&, std::shared_ptr<Exchange> ex) {
    static const auto verifier = ClientCertificateVerifier::Create(TestPki().ca.certificate);
    Response res{HttpStatus::ok, 11};
    res.body() = ex->connection().peer ? "peer|" : "no peer|";
    if (ex->connection().peer_chain.empty()) {
      res.body() += "no chain";
    } else {
      auto verified = verifier->Verify(ex->connection().peer_chain, std::chrono::system_clock::now());
      res.body() += verified.ok() ? verified->common_name : verified.status().message();
    }
    ex->Reply(std::move(res));
  });
  EXPECT_TRUE(server->Start().ok());
  return server;
}

TEST(httpTls, AcceptAnyHandsTheUnverifiedChainToTheHandler) {
  auto server = StartAcceptAnyServer();
  EXPECT_EQ(TlsGet(server->port(), &TestPki().alice), "no peer|alice");
  EXPECT_EQ(TlsGet(server->port(), nullptr), "no peer|no chain");
  // Accepted at the handshake, never as a verified peer.
  EXPECT_EQ(TlsGet(server->port(), &TestPki().mallory),
            "no peer|client certificate refused: unable to get local issuer certificate");
  EXPECT_EQ(TlsGet(server->port(), &TestPki().expired), "no peer|client certificate refused: certificate has expired");
}

TEST(httpTls, AcceptAnyExcludesAClientCa) {
  const Pki& pki = TestPki();
  auto ctx = MakeServerTlsContext({pki.server.certificate, pki.server.private_key, pki.ca.certificate, false, true});
  EXPECT_EQ(ctx.status().code(), Code::kInvalidArgument);
}

std::vector<std::shared_ptr<x509_st>> Chain(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return {std::shared_ptr<x509_st>(cert, X509_free)};
}

// The validity is the request's to the second, whatever the process clock
// says: a Vault stand-in on an injected clock issues exactly what it computed.
TEST(httpTls, ACertificateIsValidExactlyForTheRequestedSeconds) {
  const TimePoint not_before(std::chrono::seconds(1'800'000'000));
  const TimePoint not_after = not_before + 90s;
  auto pem = MustIssue({"clocked", {}, {}, {}, not_before, not_after}, &TestPki().ca);
  auto chain = Chain(pem.certificate);
  ASSERT_TRUE(chain.front());
  EXPECT_EQ(ASN1_TIME_cmp_time_t(X509_get0_notBefore(chain.front().get()), 1'800'000'000), 0);
  EXPECT_EQ(ASN1_TIME_cmp_time_t(X509_get0_notAfter(chain.front().get()), 1'800'000'090), 0);
}

TEST(httpTls, VerifierChecksTimeSerialAndUsageAtTheGivenTime) {
  const Pki& pki = TestPki();
  auto verifier = ClientCertificateVerifier::Create(pki.ca.certificate);
  ASSERT_TRUE(verifier.ok());
  const TimePoint now = std::chrono::system_clock::now();
  auto alice = verifier->Verify(Chain(pki.alice.certificate), now);
  ASSERT_TRUE(alice.ok()) << alice.status().message();
  EXPECT_EQ(alice->common_name, "alice");
  EXPECT_EQ(alice->organizations, (std::vector<std::string>{"dev", "ops"}));
  EXPECT_THAT(alice->serial, ::testing::MatchesRegex("[0-9a-f]+"));
  // The time is the caller's, not the process clock's.
  EXPECT_EQ(verifier->Verify(Chain(pki.alice.certificate), now + 48h).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(verifier->Verify(Chain(pki.alice.certificate), now - 2h).status().code(), Code::kUnauthenticated);
  // A server-only certificate of the same CA cannot authenticate a client.
  CertificateRequest server_only = Leaf("web", {});
  server_only.client_auth = false;
  auto web = MustIssue(server_only, &pki.ca);
  EXPECT_EQ(verifier->Verify(Chain(web.certificate), now).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(verifier->Verify({}, now).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(ClientCertificateVerifier::Create("no PEM").status().code(), Code::kInvalidArgument);
}

TEST(httpTls, BadKeyMaterialIsAStatus) {
  auto ctx = MakeServerTlsContext({"not a certificate", "not a key", "", false});
  EXPECT_EQ(ctx.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace septa::http
