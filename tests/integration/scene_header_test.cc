// The client names the scene of every call in the `x-collide-scene` metadata (so a router can
// shard by scene), and opens streams for one scene. A recording stand-in of the service
// captures the metadata each call arrived with.

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/cpp/client.h"
#include "client/cpp/update_writer.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_context.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

// Answers every call with an empty success and records "<rpc> <scene header or ->".
class RecordingService final : public v1::Collide::Service {
 public:
  grpc::Status GetScene(grpc::ServerContext* context, const v1::GetSceneRequest*,
                        v1::GetSceneResponse*) override {
    return Record("GetScene", context);
  }
  grpc::Status ListScenes(grpc::ServerContext* context, const v1::ListScenesRequest*,
                          v1::ListScenesResponse*) override {
    return Record("ListScenes", context);
  }
  grpc::Status UpsertBodies(grpc::ServerContext* context, const v1::UpsertBodiesRequest*,
                            v1::WriteResponse*) override {
    return Record("UpsertBodies", context);
  }
  grpc::Status Raycast(grpc::ServerContext* context, const v1::RaycastRequest*,
                       v1::QueryResponse*) override {
    return Record("Raycast", context);
  }
  grpc::Status UpdateStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::UpdateAck, v1::UpdateBatch>* stream) override {
    v1::UpdateBatch batch;
    while (stream->Read(&batch)) {
      v1::UpdateAck ack;
      ack.set_client_sequence(batch.client_sequence());
      stream->Write(ack);
    }
    return Record("UpdateStream", context);
  }

  std::vector<std::string> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  grpc::Status Record(const std::string& rpc, grpc::ServerContext* context) {
    auto it = context->client_metadata().find(client::kSceneHeader);
    std::string scene = it == context->client_metadata().end()
                            ? "-"
                            : std::string(it->second.data(), it->second.size());
    absl::MutexLock lock(&mu_);
    calls_.push_back(rpc + " " + scene);
    return grpc::Status::OK;
  }

  absl::Mutex mu_;
  std::vector<std::string> calls_;
};

TEST(SceneHeader, EveryCallNamingASceneCarriesIt) {
  RecordingService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  client::ClientOptions options;
  options.address = "127.0.0.1:" + std::to_string(port);
  options.enable_http_proxy = false;
  auto client = client::Client::Connect(options);
  ASSERT_TRUE(IsOk(client));
  ASSERT_TRUE(IsOk((*client)->GetScene("alpha")));
  ASSERT_TRUE(IsOk((*client)->ListScenes()));
  ASSERT_TRUE(IsOk((*client)->UpsertBodies("beta", std::vector<v1::Body>{})));
  v1::RaycastRequest ray;
  ray.set_scene("gamma");
  ASSERT_TRUE(IsOk((*client)->Raycast(ray)));
  auto writer = (*client)->OpenUpdateStream("delta", /*client_id=*/1);
  ASSERT_TRUE(IsOk(writer));
  v1::UpdateBatch batch;
  batch.set_scene("delta");
  ASSERT_TRUE(IsOk((*writer)->Apply(batch)));
  ASSERT_TRUE(IsOk((*writer)->Finish()));
  // Nor does a name that is no valid scene name (the server refuses it by the field; a long one
  // would overflow the metadata limit).
  ASSERT_TRUE(IsOk((*client)->GetScene(std::string(100000, 'a'))));
  ASSERT_TRUE(IsOk((*client)->GetScene("no spaces")));
  // A stream opened without a scene sends no header.
  auto any = (*client)->OpenUpdateStream("", /*client_id=*/2);
  ASSERT_TRUE(IsOk(any));
  ASSERT_TRUE(IsOk((*any)->Finish()));

  EXPECT_EQ(service.calls(),
            (std::vector<std::string>{"GetScene alpha", "ListScenes -", "UpsertBodies beta",
                                      "Raycast gamma", "UpdateStream delta", "GetScene -",
                                      "GetScene -", "UpdateStream -"}));
  server->Shutdown();
}

}  // namespace
}  // namespace collide::integration
