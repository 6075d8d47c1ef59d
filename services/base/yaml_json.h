// YAML to JSON and back: the only converters in Septa, with the YAML 1.2 core schema's
// scalar rules (https://yaml.org/spec/1.2.2/#1032-tag-resolution), so a body
// means the same whether a client sent it as JSON or as YAML:
//   null, Null, NULL, ~ and empty            -> null
//   true/True/TRUE, false/False/FALSE        -> boolean ("yes", "on" stay strings)
//   [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+    -> integer (beyond 64 bits: a float)
//   [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)? -> float
//   anything else, and every quoted or explicitly tagged scalar -> string.
// .inf and .nan, which JSON cannot hold, stay strings. Map keys are strings.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <string>

namespace septa::base {

nlohmann::json YamlToJson(const YAML::Node& node);

// Block-style YAML that YamlToJson reads back as `json`, keys in the order
// `json` has them. Strings the core schema would read as something else
// ("true", "42", "null", "") are quoted; multi-line strings are literal
// blocks. Numbers must be finite.
std::string JsonToYaml(const nlohmann::ordered_json& json);

}  // namespace septa::base
