#include "services/rest/web_app.h"

#include <boost/beast/http/field.hpp>

#include <system_error>

#include "services/base/file.h"
#include "services/core/crypto.h"
#include "services/rest/request_binding.h"

namespace septa::rest {

namespace {

namespace bh = boost::beast::http;

std::string_view ContentTypeOf(const std::filesystem::path& file) {
  static const std::map<std::string, std::string_view, std::less<>> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".webmanifest", "application/manifest+json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
  };
  auto it = kTypes.find(file.extension().string());
  return it == kTypes.end() ? std::string_view("application/octet-stream") : it->second;
}

void SetWebHeaders(http::Response& response) {
  response.set("Content-Security-Policy", kWebContentSecurityPolicy);
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Referrer-Policy", "no-referrer");
  response.set("Cross-Origin-Opener-Policy", "same-origin");
}

}  // namespace

Result<std::shared_ptr<const WebApp>> WebApp::Load(const std::filesystem::path& dir, std::string_view field) {
  auto app = std::shared_ptr<WebApp>(new WebApp());
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return InvalidField(std::string(field),
                        dir.string() + " is not a directory (build the portal: web/scripts/build.sh)");
  }
  std::uintmax_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    if (app->files_.size() == kWebAppMaxFiles) {
      return InvalidField(std::string(field), dir.string() + " holds more than " + std::to_string(kWebAppMaxFiles) +
                                                  " files: is it the portal's build (web/dist)?");
    }
    auto body = base::ReadFile(it->path());
    if (!body.ok()) return InvalidField(std::string(field), body.status().message());
    total += body->size();
    if (total > kWebAppMaxBytes) {
      return InvalidField(std::string(field), dir.string() + " holds more than " +
                                                  std::to_string(kWebAppMaxBytes >> 20) +
                                                  " MiB: is it the portal's build (web/dist)?");
    }
    const std::string path = "/" + it->path().lexically_relative(dir).generic_string();
    File file;
    file.content_type = std::string(ContentTypeOf(it->path()));
    file.etag = "\"" + core::Sha256Hex(*body).substr(0, 32) + "\"";
    file.immutable = path.starts_with("/assets/");
    file.body = *std::move(body);
    app->files_.emplace(path, std::move(file));
  }
  if (ec) return InvalidField(std::string(field), "cannot read " + dir.string() + ": " + ec.message());
  if (!app->files_.contains("/index.html")) {
    return InvalidField(std::string(field),
                        dir.string() + " has no index.html (build the portal: web/scripts/build.sh)");
  }
  return std::shared_ptr<const WebApp>(std::move(app));
}

const WebApp::File* WebApp::Find(std::string_view path) const {
  if (auto it = files_.find(path); it != files_.end()) return &it->second;
  const std::string_view last = path.substr(path.rfind('/') + 1);
  if (path.starts_with("/assets/") || last.find('.') != std::string_view::npos) return nullptr;
  return &files_.find(std::string_view("/index.html"))->second;
}

http::Response WebApp::Serve(const http::Request& request, std::string_view path) const {
  const File* file = Find(path == "/" ? std::string_view("/index.html") : path);
  if (file == nullptr) {
    http::Response r(http::HttpStatus::not_found, 11);
    SetWebHeaders(r);
    r.set(bh::field::content_type, "text/plain; charset=utf-8");
    r.body() = "not found\n";
    return r;
  }
  const bool fresh = IfNoneMatchNames(request, file->etag);
  http::Response r(fresh ? http::HttpStatus::not_modified : http::HttpStatus::ok, 11);
  SetWebHeaders(r);
  r.set(bh::field::etag, file->etag);
  r.set(bh::field::cache_control, file->immutable ? "public, max-age=31536000, immutable" : "no-cache");
  if (!fresh) {
    r.set(bh::field::content_type, file->content_type);
    r.body() = file->body;
  }
  return r;
}

}  // namespace septa::rest
