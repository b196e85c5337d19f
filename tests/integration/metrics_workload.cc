#include "integration/metrics_workload.h"

#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "integration/metrics_scrape.h"

namespace collide::integration {

using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;

void RunWorkload(ServerProcess& server, Workload* done) {
  auto client = server.NewClient();
  ASSERT_TRUE(IsOk(client->CreateScene("arena")));
  std::vector<v1::Body> bodies;
  for (int i = 0; i < kBodies; ++i) {
    bodies.push_back(client::MakeBody(static_cast<uint64_t>(i + 1), MakeSphere(0.5f),
                                      MakePose(MakeVec3(2.0f * static_cast<float>(i), 0, 0))));
  }
  ASSERT_TRUE(IsOk(client->UpsertBodies("arena", bodies)));

  for (int i = 0; i < kUnaryRaycasts; ++i) {
    v1::RaycastRequest request;
    request.set_scene("arena");
    // Every other ray passes above the bodies.
    *request.mutable_ray() =
        client::MakeRaycast(MakeVec3(-5, i % 2 == 0 ? 0.0f : 5.0f, 0), MakeVec3(1, 0, 0), 100);
    auto answer = client->Raycast(request);
    ASSERT_TRUE(IsOk(answer));
    done->hits += static_cast<uint64_t>(answer->hits_size());
  }

  auto stream = client->OpenQueryStream("arena");
  ASSERT_TRUE(IsOk(stream));
  for (int b = 0; b < kStreamBatches; ++b) {
    v1::QueryBatch batch;
    batch.set_scene("arena");
    for (int q = 0; q < kQueriesPerBatch; ++q) {
      *batch.add_queries() = client::MakeOverlapQuery(
          static_cast<uint64_t>(q),
          client::MakeOverlap(MakeSphere(0.5f + 0.1f * static_cast<float>(b)),
                              MakePose(MakeVec3(0.25f * static_cast<float>(q), 0, 0))));
    }
    auto answer = (*stream)->Run(batch);
    ASSERT_TRUE(IsOk(answer));
    ASSERT_TRUE(IsOk(client::BatchStatus(*answer)));
    for (const v1::QueryResult& result : answer->results()) {
      ASSERT_TRUE(IsOk(client::ResultStatus(result)));
      done->hits += static_cast<uint64_t>(result.hits_size());
    }
  }
  ASSERT_TRUE(IsOk((*stream)->Finish()));

  auto writer = client->OpenUpdateStream("arena", /*client_id=*/3);
  ASSERT_TRUE(IsOk(writer));
  for (int b = 0; b < kMoveBatches; ++b) {
    v1::UpdateBatch batch;
    batch.set_scene("arena");
    for (int m = 0; m < kMovesPerBatch; ++m) {
      client::AddMove(
          static_cast<uint64_t>(m + 1),
          MakePose(MakeVec3(2.0f * static_cast<float>(m), 0.01f * static_cast<float>(b), 0)),
          batch.mutable_moves());
    }
    auto ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack));
    ASSERT_TRUE(IsOk(client::AckStatus(*ack)));
  }
  v1::UpdateBatch refused;
  refused.set_scene("arena");
  client::AddMove(999, MakePose(MakeVec3(0, 0, 0)), refused.mutable_moves());
  auto ack = (*writer)->Apply(refused);
  ASSERT_TRUE(IsOk(ack));
  ASSERT_TRUE(HasError(client::AckStatus(*ack), absl::StatusCode::kNotFound, ""));
  // While the stream is open, the gauge counts it.
  auto during = Scrape(server.metrics_port());
  ASSERT_TRUE(IsOk(during));
  EXPECT_EQ(SampleValue(*during, "collide_streams_open", {{"kind", "update"}}), 1.0);
  ASSERT_TRUE(IsOk((*writer)->Finish()));

  EXPECT_TRUE(HasError(client->GetScene("missing").status(), absl::StatusCode::kNotFound, ""));
  auto scene = client->GetScene("arena");
  ASSERT_TRUE(IsOk(scene));
  done->version = scene->stats().version();
}

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace collide::integration
