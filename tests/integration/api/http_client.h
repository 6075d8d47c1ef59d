// A small blocking HTTP/1.1 client for tests: one keep-alive connection to
// 127.0.0.1:<port>.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace septa::test {

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port);
  ~HttpClient();

  // Reconnects once if the server closed the kept-alive connection.
  HttpResult Send(const std::string& method, const std::string& target, const std::string& body = "",
                  const std::map<std::string, std::string>& headers = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace septa::test
