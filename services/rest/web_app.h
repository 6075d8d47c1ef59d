// The portal's built files (web/dist), served by septad's REST listener at
// `/`. The files are read once at start and served from memory: a request
// path is only ever a key of that map, so no request reaches the file system
// (no traversal, no symlink, no file that appeared later), and the portal a
// process serves is the one it started with (restart septad after a rebuild).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "services/http/server.h"

namespace septa::rest {

// What every response of the portal carries. The policy allows only the
// origin's own files: the build emits no inline script or style (web/
// scripts/check-dist.mjs), and the app renders server text as text.
inline constexpr char kWebContentSecurityPolicy[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// Bounds that catch a mistyped directory (say, `/`) at start instead of
// loading it into memory.
inline constexpr std::size_t kWebAppMaxFiles = 2'000;
inline constexpr std::uintmax_t kWebAppMaxBytes = 64ull << 20;

class WebApp {
 public:
  // Reads every regular file under `dir` (symlinks are not followed). The
  // errors name `field` (the configuration key): a missing directory, no
  // index.html, or more than the bounds above.
  static Result<std::shared_ptr<const WebApp>> Load(const std::filesystem::path& dir, std::string_view field);

  // A GET of `path` (decoded, from `/`): the file at that path; for any other
  // path that does not name a file (no dot in its last segment) and is not
  // under /assets/, index.html, so that the app's own routes (/vclusters/x)
  // load the app; otherwise 404. Hashed files under /assets/ are cached for
  // a year (`immutable`), everything else is revalidated (`no-cache`) by its
  // ETag (If-None-Match answers 304).
  http::Response Serve(const http::Request& request, std::string_view path) const;

  std::size_t file_count() const { return files_.size(); }

 private:
  struct File {
    std::string body;
    std::string content_type;
    std::string etag;  // "\"<hex>\"": the first 128 bits of its SHA-256
    bool immutable = false;
  };
  const File* Find(std::string_view path) const;

  std::map<std::string, File, std::less<>> files_;  // by path: "/index.html", "/assets/index-3f2a.js"
};

}  // namespace septa::rest
