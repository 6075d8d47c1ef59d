#include "services/base/json_log.h"

#include <spdlog/pattern_formatter.h>
#include <nlohmann/json.hpp>

#include <string>

namespace septa::base {

namespace {

// %* in the pattern: the message as a JSON string, quotes included.
class JsonEscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string text = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonEscapedMessage>(); }
};

}  // namespace

std::unique_ptr<spdlog::formatter> JsonLineFormatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<JsonEscapedMessage>('*').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":%*})");
  return formatter;
}

}  // namespace septa::base
