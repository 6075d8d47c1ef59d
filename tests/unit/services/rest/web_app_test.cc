// The portal's files as septad serves them (services/rest/web_app.h): from
// memory, with the app's own routes falling back to index.html, hashed assets
// cached for good and every response under the content security policy.
#include "services/rest/web_app.h"

#include <gtest/gtest.h>
#include <boost/beast/http/field.hpp>

#include "tests/support/temp_dir.h"

namespace septa::rest {
namespace {

namespace bh = boost::beast::http;
using test::TempDir;

constexpr char kIndex[] = "<!doctype html><script type=module src=/assets/index-3f2a.js></script>";

class WebAppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("index.html", kIndex);
    dir_.Write("assets/index-3f2a.js", "console.log(1)");
    dir_.Write("assets/index-9c1d.css", "body{}");
    dir_.Write("favicon.svg", "<svg/>");
    auto app = WebApp::Load(dir_.path(), "web_dir");
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = *std::move(app);
  }

  http::Response Get(std::string_view path, std::string_view if_none_match = "") const {
    http::Request request(bh::verb::get, std::string(path), 11);
    if (!if_none_match.empty()) request.set(bh::field::if_none_match, std::string(if_none_match));
    return app_->Serve(request, path);
  }

  TempDir dir_;
  std::shared_ptr<const WebApp> app_;
};

TEST_F(WebAppTest, ServesIndexAtTheRootUnderThePolicyAndRevalidated) {
  http::Response r = Get("/");
  EXPECT_EQ(r.result(), http::HttpStatus::ok);
  EXPECT_EQ(r.body(), kIndex);
  EXPECT_EQ(r[bh::field::content_type], "text/html; charset=utf-8");
  EXPECT_EQ(r[bh::field::cache_control], "no-cache");
  EXPECT_EQ(r["Content-Security-Policy"], kWebContentSecurityPolicy);
  EXPECT_EQ(r["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(r["Referrer-Policy"], "no-referrer");
  EXPECT_EQ(app_->file_count(), 4u);
}

TEST_F(WebAppTest, TheAppsOwnRoutesGetIndex) {
  for (std::string_view path : {"/vclusters", "/vclusters/train", "/sign-in", "/tenants/acme/tokens"}) {
    http::Response r = Get(path);
    EXPECT_EQ(r.result(), http::HttpStatus::ok) << path;
    EXPECT_EQ(r.body(), kIndex) << path;
  }
}

TEST_F(WebAppTest, HashedAssetsAreCachedForGoodAndTyped) {
  http::Response js = Get("/assets/index-3f2a.js");
  EXPECT_EQ(js.result(), http::HttpStatus::ok);
  EXPECT_EQ(js.body(), "console.log(1)");
  EXPECT_EQ(js[bh::field::content_type], "text/javascript; charset=utf-8");
  EXPECT_EQ(js[bh::field::cache_control], "public, max-age=31536000, immutable");
  EXPECT_EQ(Get("/assets/index-9c1d.css")[bh::field::content_type], "text/css; charset=utf-8");
  http::Response svg = Get("/favicon.svg");
  EXPECT_EQ(svg[bh::field::content_type], "image/svg+xml");
  EXPECT_EQ(svg[bh::field::cache_control], "no-cache");
}

// A missing file is a 404, never the app's page: a stale hashed asset or a
// mistyped file must not be answered with HTML the browser then runs as JS.
TEST_F(WebAppTest, AMissingFileIsNotFoundNotTheApp) {
  for (std::string_view path : {"/assets/index-0000.js", "/assets/x", "/robots.txt", "/a/b.png"}) {
    http::Response r = Get(path);
    EXPECT_EQ(r.result(), http::HttpStatus::not_found) << path;
    EXPECT_EQ(r["Content-Security-Policy"], kWebContentSecurityPolicy) << path;
  }
}

TEST_F(WebAppTest, AnUnchangedFileIsNotSentAgain) {
  http::Response first = Get("/assets/index-3f2a.js");
  const std::string etag(first[bh::field::etag]);
  ASSERT_EQ(etag.size(), 34u);  // 32 hex digits, quoted
  http::Response again = Get("/assets/index-3f2a.js", etag);
  EXPECT_EQ(again.result(), http::HttpStatus::not_modified);
  EXPECT_TRUE(again.body().empty());
  EXPECT_EQ(Get("/assets/index-3f2a.js", "\"x\", W/" + etag).result(), http::HttpStatus::not_modified);
  EXPECT_EQ(Get("/assets/index-3f2a.js", "*").result(), http::HttpStatus::not_modified);
  EXPECT_EQ(Get("/assets/index-3f2a.js", "\"other\"").result(), http::HttpStatus::ok);
  EXPECT_NE(Get("/")[bh::field::etag], etag);
}

// Paths are keys of what was read at start: nothing a request names reaches
// the file system.
TEST_F(WebAppTest, NoPathLeavesTheLoadedFiles) {
  dir_.Write("later.js", "written after start");
  EXPECT_EQ(Get("/later.js").result(), http::HttpStatus::not_found);
  // A route-like path is the app's page; one naming a file is not found.
  for (std::string_view path : {"/../etc/passwd", "//etc/passwd", "/../../later"}) {
    EXPECT_EQ(Get(path).body(), kIndex) << path;
  }
  for (std::string_view path : {"/../later.js", "/assets/../index.html.bak", "/./later.js"}) {
    EXPECT_EQ(Get(path).result(), http::HttpStatus::not_found) << path;
  }
}

TEST(WebAppLoad, RefusesWhatIsNotABuiltPortalNamingTheKey) {
  TempDir empty;
  auto no_index = WebApp::Load(empty.path(), "web_dir");
  ASSERT_FALSE(no_index.ok());
  EXPECT_EQ(no_index.status().code(), Code::kInvalidArgument);
  EXPECT_NE(no_index.status().message().find("has no index.html"), std::string::npos) << no_index.status().ToString();
  ASSERT_FALSE(no_index.status().violations().empty());
  EXPECT_EQ(no_index.status().violations()[0].field, "web_dir");

  auto missing = WebApp::Load(empty.path() + "/nope", "web_dir");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("is not a directory"), std::string::npos);

  TempDir crowded;
  crowded.Write("index.html", "x");
  for (std::size_t i = 0; i < kWebAppMaxFiles; ++i) crowded.Write("f/" + std::to_string(i), "");
  auto too_many = WebApp::Load(crowded.path(), "web_dir");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("more than 2000 files"), std::string::npos)
      << too_many.status().ToString();
}

}  // namespace
}  // namespace septa::rest
