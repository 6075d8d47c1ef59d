// log_format: json writes one valid JSON object per line, whatever the
// message holds (the pattern "msg":"%v" it replaces did not).
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "services/base/json_log.h"

namespace septa::base {
namespace {

TEST(JsonLog, EveryLineIsAJsonObjectHoldingTheMessageAsLogged) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(JsonLineFormatter());
  const std::string messages[] = {
      "plain",
      "tenant \"acme\" not found",
      "a back\\slash, a tab\t, a newline\n and a control \x01 character",
      "bytes that are not UTF-8: \xff\xfe",
  };
  for (const std::string& m : messages) logger.warn("{}", m);

  std::istringstream lines(out.str());
  std::string line;
  std::vector<nlohmann::json> logged;
  while (std::getline(lines, line)) {
    auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(parsed.is_discarded()) << "not JSON: " << line;
    logged.push_back(std::move(parsed));
  }
  ASSERT_EQ(logged.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(logged[i]["msg"], messages[i]);
    EXPECT_EQ(logged[i]["level"], "warning");
    EXPECT_TRUE(logged[i]["time"].is_string());
  }
  EXPECT_EQ(logged[3]["msg"], "bytes that are not UTF-8: \xef\xbf\xbd\xef\xbf\xbd");  // U+FFFD each
}

}  // namespace
}  // namespace septa::base
