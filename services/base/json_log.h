// septad's `log_format: json`: one JSON object per line. The message is
// escaped by nlohmann::json (quotes, backslashes, control characters; bytes
// that are not UTF-8 replaced), so a message that quotes a name, or a
// client's text, keeps the line valid JSON. spdlog's own %v would write it
// raw.
#pragma once

#include <spdlog/formatter.h>

#include <memory>

namespace septa::base {

// {"time":"2026-11-29T05:00:00.000+0000","level":"info","msg":"..."}
std::unique_ptr<spdlog::formatter> JsonLineFormatter();

}  // namespace septa::base
