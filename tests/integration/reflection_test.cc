// Server reflection v1 (grpc.reflection.v1.ServerReflection) against a real server, through the
// generated v1 stub: the services listed, files found by symbol and name, and errors for what
// the server does not know.

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

namespace reflection = grpc::reflection::v1;

class ReflectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    // Reflection needs no token, like the health service.
    config.token_file_contents = "admin-token admin\n";
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    channel_ =
        grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args);
    stub_ = reflection::ServerReflection::NewStub(channel_);
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    stream_ = stub_->ServerReflectionInfo(&context_);
  }

  void TearDown() override {
    if (stream_ != nullptr) {
      stream_->WritesDone();
      EXPECT_TRUE(stream_->Finish().ok());
    }
  }

  // Sends `request` on the test's stream and returns its answer.
  reflection::ServerReflectionResponse Ask(const reflection::ServerReflectionRequest& request) {
    reflection::ServerReflectionResponse response;
    EXPECT_TRUE(stream_->Write(request));
    EXPECT_TRUE(stream_->Read(&response));
    EXPECT_EQ(response.original_request().SerializeAsString(), request.SerializeAsString());
    return response;
  }

  // The files of a file_descriptor_response, parsed; fails the test on bytes that do not parse.
  static std::vector<google::protobuf::FileDescriptorProto> Files(
      const reflection::ServerReflectionResponse& response) {
    std::vector<google::protobuf::FileDescriptorProto> files;
    for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
      EXPECT_TRUE(files.emplace_back().ParseFromString(bytes));
    }
    return files;
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<reflection::ServerReflection::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<reflection::ServerReflectionRequest,
                                           reflection::ServerReflectionResponse>>
      stream_;
};

TEST_F(ReflectionTest, ListServicesNamesEveryService) {
  reflection::ServerReflectionRequest request;
  request.set_host("localhost");
  request.set_list_services("");
  reflection::ServerReflectionResponse response = Ask(request);
  EXPECT_EQ(response.valid_host(), "localhost");
  ASSERT_TRUE(response.has_list_services_response()) << response.DebugString();
  std::set<std::string> names;
  for (const reflection::ServiceResponse& service : response.list_services_response().service()) {
    names.insert(service.name());
  }
  for (const char* name :
       {"collide.v1.Collide", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

TEST_F(ReflectionTest, FileContainingSymbolReturnsTheFileThatDefinesIt) {
  for (const char* symbol : {"collide.v1.Collide", "collide.v1.Collide.GetServerStats",
                             "collide.v1.GetServerStatsResponse", "collide.v1.Durability"}) {
    SCOPED_TRACE(symbol);
    reflection::ServerReflectionRequest request;
    request.set_file_containing_symbol(symbol);
    std::vector<google::protobuf::FileDescriptorProto> files = Files(Ask(request));
    ASSERT_FALSE(files.empty());
    EXPECT_EQ(files[0].name(), "collide/v1/collide.proto");
    EXPECT_EQ(files[0].package(), "collide.v1");
  }
  // The service's file names its rpcs; the stream sent it already, so it comes once more
  // (asked for) but its imports are not repeated.
  reflection::ServerReflectionRequest request;
  request.set_file_containing_symbol("collide.v1.Collide");
  std::vector<google::protobuf::FileDescriptorProto> files = Files(Ask(request));
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(files[0].service_size(), 1);
  EXPECT_EQ(files[0].service(0).name(), "Collide");
  bool has_stats = false;
  for (const auto& method : files[0].service(0).method()) {
    has_stats |= method.name() == "GetServerStats";
  }
  EXPECT_TRUE(has_stats);
}

TEST_F(ReflectionTest, FileByFilenameAndItsOwnDefinition) {
  reflection::ServerReflectionRequest request;
  request.set_file_by_filename("grpc/reflection/v1/reflection.proto");
  std::vector<google::protobuf::FileDescriptorProto> files = Files(Ask(request));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].package(), "grpc.reflection.v1");
  ASSERT_EQ(files[0].service_size(), 1);
  EXPECT_EQ(files[0].service(0).name(), "ServerReflection");
}

TEST_F(ReflectionTest, UnknownNamesAreNotFoundAndTheStreamGoesOn) {
  auto expect_not_found = [this](const reflection::ServerReflectionRequest& request) {
    reflection::ServerReflectionResponse response = Ask(request);
    ASSERT_TRUE(response.has_error_response()) << response.DebugString();
    EXPECT_EQ(response.error_response().error_code(),
              static_cast<int32_t>(grpc::StatusCode::NOT_FOUND));
    EXPECT_FALSE(response.error_response().error_message().empty());
  };
  reflection::ServerReflectionRequest request;
  for (const char* symbol :
       {"no.such.Service", "", "collide.v1.Collide.NoSuchMethod", "..", "collide.v1.\n"}) {
    request.set_file_containing_symbol(symbol);
    expect_not_found(request);
  }
  for (const char* file : {"no/such.proto", "", "../../etc/passwd", "/collide/v1/collide.proto"}) {
    request.set_file_by_filename(file);
    expect_not_found(request);
  }
  for (int32_t number : {0, 1, -1, 536870911, INT32_MAX, INT32_MIN}) {
    request.mutable_file_containing_extension()->set_containing_type("collide.v1.Body");
    request.mutable_file_containing_extension()->set_extension_number(number);
    expect_not_found(request);
  }
  request.set_all_extension_numbers_of_type("no.such.Type");
  expect_not_found(request);

  // A type without extensions has none; a request with no question is UNIMPLEMENTED.
  request.set_all_extension_numbers_of_type("collide.v1.Body");
  reflection::ServerReflectionResponse response = Ask(request);
  ASSERT_TRUE(response.has_all_extension_numbers_response()) << response.DebugString();
  EXPECT_EQ(response.all_extension_numbers_response().base_type_name(), "collide.v1.Body");
  EXPECT_EQ(response.all_extension_numbers_response().extension_number_size(), 0);
  request.Clear();
  response = Ask(request);
  ASSERT_TRUE(response.has_error_response());
  EXPECT_EQ(response.error_response().error_code(),
            static_cast<int32_t>(grpc::StatusCode::UNIMPLEMENTED));

  // The stream still answers.
  request.set_list_services("");
  EXPECT_TRUE(Ask(request).has_list_services_response());
}

}  // namespace
}  // namespace collide::integration
