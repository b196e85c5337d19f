// An installed collide client in use: creates a scene, upserts a sphere and raycasts it, then
// deletes the scene. Prints the hit ("hit body 7 at distance 4") and exits 0, or prints the
// error and exits 1.
//
//   consumer <host:port>

#include <cstdio>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_runtime.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "consumer: %s\n", status.ToString().c_str());
  return 1;
}

int Run(const char* address) {
  namespace client = collide::client;
  client::ClientOptions options;
  options.address = address;
  absl::StatusOr<std::unique_ptr<client::Client>> connected = client::Client::Connect(options);
  if (!connected.ok()) return Fail(connected.status());
  client::Client& collide = **connected;

  if (absl::StatusOr<collide::v1::SceneInfo> scene = collide.CreateScene("consumer"); !scene.ok())
    return Fail(scene.status());
  std::vector<collide::v1::Body> bodies = {
      client::MakeBody(7, client::MakeSphere(1), client::MakePose(client::MakeVec3(5, 0, 0)))};
  if (absl::StatusOr<collide::v1::WriteResponse> written = collide.UpsertBodies("consumer", bodies);
      !written.ok())
    return Fail(written.status());

  collide::v1::RaycastRequest ray;
  ray.set_scene("consumer");
  *ray.mutable_ray() =
      client::MakeRaycast(client::MakeVec3(0, 0, 0), client::MakeVec3(1, 0, 0), 100);
  ray.set_mode(collide::v1::MODE_CLOSEST);
  absl::StatusOr<collide::v1::QueryResponse> answer = collide.Raycast(ray);
  if (!answer.ok()) return Fail(answer.status());
  if (answer->hits_size() != 1) {
    std::fprintf(stderr, "consumer: %d hits, want 1\n", answer->hits_size());
    return 1;
  }
  std::printf("hit body %llu at distance %g\n",
              static_cast<unsigned long long>(answer->hits(0).body_id()),
              answer->hits(0).distance());
  if (absl::Status deleted = collide.DeleteScene("consumer"); !deleted.ok()) return Fail(deleted);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer <host:port>\n");
    return 2;
  }
  collide::client::GrpcRuntime grpc;
  return Run(argv[1]);
}
