// The health probe's grpc.health.v1 messages (generated from proto/grpc/health/v1/health.proto),
// checked against protobuf's encoding of the published message definitions (built at run time
// from a descriptor, so the oracle is independent of our .proto file).

#include "client/health/health_check.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/text_format.h"

namespace collide {
namespace {

// The two messages of grpc.health.v1 that Check uses, as protobuf descriptors.
class HealthMessages {
 public:
  HealthMessages() {
    google::protobuf::FileDescriptorProto file;
    const bool parsed = google::protobuf::TextFormat::ParseFromString(
        R"pb(
          name: "health_test.proto"
          package: "grpc.health.v1"
          syntax: "proto3"
          message_type {
            name: "HealthCheckRequest"
            field { name: "service" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL }
          }
          message_type {
            name: "HealthCheckResponse"
            field {
              name: "status"
              number: 1
              type: TYPE_ENUM
              label: LABEL_OPTIONAL
              type_name: ".grpc.health.v1.HealthCheckResponse.ServingStatus"
            }
            field { name: "note" number: 7 type: TYPE_STRING label: LABEL_OPTIONAL }
            field { name: "count" number: 9 type: TYPE_FIXED64 label: LABEL_OPTIONAL }
            enum_type {
              name: "ServingStatus"
              value { name: "UNKNOWN" number: 0 }
              value { name: "SERVING" number: 1 }
              value { name: "NOT_SERVING" number: 2 }
              value { name: "SERVICE_UNKNOWN" number: 3 }
            }
          }
        )pb",
        &file);
    EXPECT_TRUE(parsed);
    file_ = pool_.BuildFile(file);
    EXPECT_NE(file_, nullptr);
  }

  std::unique_ptr<google::protobuf::Message> New(const std::string& name, const std::string& text) {
    const google::protobuf::Descriptor* descriptor =
        pool_.FindMessageTypeByName("grpc.health.v1." + name);
    std::unique_ptr<google::protobuf::Message> message(factory_.GetPrototype(descriptor)->New());
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, message.get())) << text;
    return message;
  }

 private:
  google::protobuf::DescriptorPool pool_;
  const google::protobuf::FileDescriptor* file_ = nullptr;
  google::protobuf::DynamicMessageFactory factory_;
};

TEST(EncodeHealthCheckRequest, EncodesTheServiceNameAsProtobufDoes) {
  HealthMessages messages;
  for (const std::string& service :
       {std::string(), std::string("collide.v1.Collide"), std::string(200, 's')}) {
    auto expected = messages.New("HealthCheckRequest", "service: '" + service + "'");
    EXPECT_EQ(EncodeHealthCheckRequest(service), expected->SerializeAsString()) << service;
  }
}

TEST(DecodeHealthCheckResponse, ReadsTheStatusAsProtobufEncodesIt) {
  HealthMessages messages;
  struct Case {
    const char* text;
    ServingStatus expected;
  };
  const Case cases[] = {
      {"", ServingStatus::kUnknown},
      {"status: SERVING", ServingStatus::kServing},
      {"status: NOT_SERVING", ServingStatus::kNotServing},
      {"status: SERVICE_UNKNOWN", ServingStatus::kServiceUnknown},
      // Fields a newer server might add are skipped, wherever they are.
      {"status: SERVING note: 'fine' count: 7", ServingStatus::kServing},
      {"note: 'draining' status: NOT_SERVING", ServingStatus::kNotServing},
  };
  for (const Case& c : cases) {
    const std::string bytes = messages.New("HealthCheckResponse", c.text)->SerializeAsString();
    absl::StatusOr<ServingStatus> decoded = DecodeHealthCheckResponse(bytes);
    ASSERT_TRUE(decoded.ok()) << c.text << ": " << decoded.status();
    EXPECT_EQ(*decoded, c.expected) << c.text;
  }
}

TEST(DecodeHealthCheckResponse, RejectsMalformedBytes) {
  const std::string bad[] = {
      std::string("\x08", 1),          // key without its value
      std::string("\x08\x81", 2),      // unfinished varint
      std::string("\x3a\x05\x61", 3),  // a string field longer than what is left
      std::string("\x0a\x01\x61", 3),  // field 1 as a string
      std::string("\x0b", 1),          // a group (wire type 3)
      std::string(11, '\xff'),         // a varint of more than 64 bits
  };
  for (const std::string& bytes : bad) {
    EXPECT_EQ(DecodeHealthCheckResponse(bytes).status().code(), absl::StatusCode::kDataLoss)
        << testing::PrintToString(bytes);
  }
}

TEST(ServingStatusName, NamesEveryStatus) {
  EXPECT_EQ(ServingStatusName(ServingStatus::kServing), "SERVING");
  EXPECT_EQ(ServingStatusName(ServingStatus::kNotServing), "NOT_SERVING");
  EXPECT_EQ(ServingStatusName(ServingStatus::kUnknown), "UNKNOWN");
  EXPECT_EQ(ServingStatusName(ServingStatus::kServiceUnknown), "SERVICE_UNKNOWN");
  EXPECT_EQ(ServingStatusName(static_cast<ServingStatus>(9)), "status 9");
}

}  // namespace
}  // namespace collide
