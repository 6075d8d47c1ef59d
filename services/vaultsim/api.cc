#include "services/vaultsim/api.h"

#include <array>
#include <cctype>
#include <ctime>

namespace septa::vaultsim {

ApiReply Error(int status, const std::string& message) {
  json errors = json::array();
  if (!message.empty()) errors.push_back(message);
  return ApiReply{status, json{{"errors", errors}}.dump(), "application/json"};
}

ApiReply Reply(const Envelope& envelope, const std::string& request_id) {
  json body = {{"request_id", request_id},
               {"lease_id", envelope.lease_id},
               {"renewable", envelope.renewable},
               {"lease_duration", envelope.lease_duration},
               {"data", envelope.data},
               {"wrap_info", nullptr},
               {"warnings", envelope.warnings.empty() ? json(nullptr) : json(envelope.warnings)},
               {"auth", envelope.auth},
               {"mount_type", ""}};
  return ApiReply{200, body.dump(), "application/json"};
}

std::optional<std::chrono::seconds> ParseDuration(const json& value) {
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return std::chrono::seconds(value.get<std::int64_t>());
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0, number = 0;
  bool have_digits = false, any_unit = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      number = number * 10 + (c - '0');
      have_digits = true;
      if (number > 1'000'000'000'000) return std::nullopt;
      continue;
    }
    if (!have_digits) return std::nullopt;
    std::int64_t unit = c == 'h' ? 3600 : c == 'm' ? 60 : c == 's' ? 1 : c == 'd' ? 86400 : 0;
    if (unit == 0) return std::nullopt;
    total += number * unit;
    number = 0;
    have_digits = false;
    any_unit = true;
  }
  if (have_digits) {
    if (any_unit) return std::nullopt;  // "1h30" is malformed
    total = number;
  }
  return std::chrono::seconds(total);
}

std::int64_t UnixSeconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string GoDuration(std::chrono::seconds d) {
  std::int64_t s = d.count();
  if (s == 0) return "0s";
  std::string out;
  if (s >= 3600) out += std::to_string(s / 3600) + "h";
  if (s >= 60) out += std::to_string((s % 3600) / 60) + "m";
  return out + std::to_string(s % 60) + "s";
}

std::vector<std::string> StringList(const json& value) {
  std::vector<std::string> out;
  auto add = [&](std::string item) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(std::move(item));
  };
  if (value.is_array()) {
    for (const auto& v : value) {
      if (v.is_string()) add(v.get<std::string>());
    }
  } else if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      add(text.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return out;
}

Result<std::chrono::seconds> DurationField(const json& body, const std::string& name, std::chrono::seconds fallback) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null() || (it->is_string() && it->get_ref<const std::string&>().empty())) {
    return fallback;
  }
  auto d = ParseDuration(*it);
  if (!d) return InvalidArgument("error converting input " + it->dump() + " for field \"" + name + "\"");
  return *d;
}

}  // namespace septa::vaultsim
