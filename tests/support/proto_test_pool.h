// A small .proto built in its own descriptor pool, for tests of what is read
// from method options (bindings, auth rules): package t, service t.S with
// one method per entry (M0, M1, ...), each taking t.Req {name, thing:
// t.Thing {name, etag}, tags: repeated string} and returning t.Thing. Each
// entry is the text inside the method's `options { }`, e.g.
// `[septa.v1.http] { get: "/v1/things" }`.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace septa::test {

class ProtoTestPool {
 public:
  explicit ProtoTestPool(const std::vector<std::string>& method_options) {
    std::string methods;
    for (std::size_t i = 0; i < method_options.size(); ++i) {
      methods += "method { name: \"M" + std::to_string(i) +
                 "\" input_type: \".t.Req\" output_type: \".t.Thing\" options { " + method_options[i] + " } }\n";
    }
    const std::string text = R"(
      name: "t.proto" package: "t" syntax: "proto3"
      message_type { name: "Thing"
        field { name: "name" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "name" }
        field { name: "etag" number: 2 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "etag" } }
      message_type { name: "Req"
        field { name: "name" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL json_name: "name" }
        field { name: "thing" number: 2 type: TYPE_MESSAGE type_name: ".t.Thing" label: LABEL_OPTIONAL json_name: "thing" }
        field { name: "tags" number: 3 type: TYPE_STRING label: LABEL_REPEATED json_name: "tags" } }
      service { name: "S" )" +
                             methods + "}";
    google::protobuf::FileDescriptorProto file;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &file)) << text;
    EXPECT_NE(pool_.BuildFile(file), nullptr);
  }

  const google::protobuf::DescriptorPool& pool() const { return pool_; }
  const google::protobuf::ServiceDescriptor* service() const { return pool_.FindServiceByName("t.S"); }
  // An empty message of `type` ("t.Req"), by reflection.
  std::unique_ptr<google::protobuf::Message> New(const std::string& type) {
    return std::unique_ptr<google::protobuf::Message>(factory_.GetPrototype(pool_.FindMessageTypeByName(type))->New());
  }

 private:
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_;
};

}  // namespace septa::test
