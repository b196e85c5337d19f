#include "client/cpp/client.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/grpc_status.h"

namespace collide::client {
namespace {

// The server's rule for scene names: 1 to 128 characters of [A-Za-z0-9_.-], starting with a
// letter or a digit.
bool IsValidSceneName(std::string_view scene) {
  if (scene.empty() || scene.size() > 128 || !absl::ascii_isalnum(scene[0])) return false;
  return std::all_of(scene.begin(), scene.end(), [](char ch) {
    return absl::ascii_isalnum(ch) || ch == '_' || ch == '.' || ch == '-';
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const ClientOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(options);
  if (!channel.ok()) return channel.status();
  return std::make_unique<Client>(*std::move(channel), options);
}

Client::Client(std::shared_ptr<grpc::Channel> channel, ClientOptions options)
    : channel_(std::move(channel)),
      options_(std::move(options)),
      stub_(v1::Collide::NewStub(channel_)) {}

std::unique_ptr<grpc::ClientContext> Client::NewContext(std::string_view scene, bool unary,
                                                        const CallOptions& call) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!options_.bearer_token.empty()) {
    context->AddMetadata("authorization", absl::StrCat("Bearer ", options_.bearer_token));
  }
  // Only a valid scene name goes into the header: the server refuses any other by the request's
  // own field (with its field path), and a long one would overflow the metadata limit.
  if (IsValidSceneName(scene)) context->AddMetadata(kSceneHeader, std::string(scene));
  absl::Duration deadline =
      call.deadline.value_or(unary ? options_.default_deadline : options_.stream_deadline);
  if (deadline > absl::ZeroDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  }
  if (call.wait_for_ready) context->set_wait_for_ready(true);
  return context;
}

absl::Status Client::WaitForConnected(absl::Duration timeout) {
  if (channel_->WaitForConnected(absl::ToChronoTime(absl::Now() + timeout))) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(absl::StrCat("not connected to ", options_.address, " within ",
                                                  absl::FormatDuration(timeout)));
}

absl::StatusOr<v1::SceneInfo> Client::CreateScene(const v1::CreateSceneRequest& request,
                                                  const CallOptions& call) {
  v1::CreateSceneResponse response;
  auto context = NewContext(request.scene(), true, call);
  absl::Status status = FromGrpcStatus(stub_->CreateScene(context.get(), request, &response));
  if (!status.ok()) return status;
  return std::move(*response.mutable_scene());
}

absl::StatusOr<v1::SceneInfo> Client::CreateScene(std::string_view scene,
                                                  const v1::SceneOptions& options,
                                                  const CallOptions& call) {
  v1::CreateSceneRequest request;
  request.set_scene(std::string(scene));
  *request.mutable_options() = options;
  return CreateScene(request, call);
}

absl::Status Client::DeleteScene(std::string_view scene, const CallOptions& call) {
  v1::DeleteSceneRequest request;
  request.set_scene(std::string(scene));
  v1::DeleteSceneResponse response;
  auto context = NewContext(scene, true, call);
  return FromGrpcStatus(stub_->DeleteScene(context.get(), request, &response));
}

absl::StatusOr<std::vector<v1::SceneInfo>> Client::ListScenes(const CallOptions& call) {
  v1::ListScenesResponse response;
  auto context = NewContext("", true, call);
  absl::Status status =
      FromGrpcStatus(stub_->ListScenes(context.get(), v1::ListScenesRequest(), &response));
  if (!status.ok()) return status;
  return std::vector<v1::SceneInfo>(response.scenes().begin(), response.scenes().end());
}

absl::StatusOr<v1::SceneInfo> Client::GetScene(std::string_view scene, const CallOptions& call) {
  v1::GetSceneRequest request;
  request.set_scene(std::string(scene));
  v1::GetSceneResponse response;
  auto context = NewContext(scene, true, call);
  absl::Status status = FromGrpcStatus(stub_->GetScene(context.get(), request, &response));
  if (!status.ok()) return status;
  return std::move(*response.mutable_scene());
}

absl::StatusOr<v1::GetServerStatsResponse> Client::GetServerStats(
    std::optional<uint32_t> max_scenes, const CallOptions& call) {
  v1::GetServerStatsRequest request;
  if (max_scenes.has_value()) request.set_max_scenes(*max_scenes);
  v1::GetServerStatsResponse response;
  auto context = NewContext("", true, call);
  absl::Status status = FromGrpcStatus(stub_->GetServerStats(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::WriteResponse> Client::UpsertBodies(const v1::UpsertBodiesRequest& request,
                                                       const CallOptions& call) {
  v1::WriteResponse response;
  auto context = NewContext(request.scene(), true, call);
  absl::Status status = FromGrpcStatus(stub_->UpsertBodies(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::WriteResponse> Client::UpsertBodies(std::string_view scene,
                                                       std::span<const v1::Body> bodies,
                                                       const CallOptions& call) {
  v1::UpsertBodiesRequest request;
  request.set_scene(std::string(scene));
  for (const v1::Body& body : bodies) *request.add_bodies() = body;
  return UpsertBodies(request, call);
}

absl::StatusOr<v1::WriteResponse> Client::RemoveBodies(const v1::RemoveBodiesRequest& request,
                                                       const CallOptions& call) {
  v1::WriteResponse response;
  auto context = NewContext(request.scene(), true, call);
  absl::Status status = FromGrpcStatus(stub_->RemoveBodies(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::WriteResponse> Client::RemoveBodies(std::string_view scene,
                                                       std::span<const uint64_t> ids,
                                                       const CallOptions& call) {
  v1::RemoveBodiesRequest request;
  request.set_scene(std::string(scene));
  for (uint64_t id : ids) request.add_ids(id);
  return RemoveBodies(request, call);
}

absl::StatusOr<v1::GetBodiesResponse> Client::GetBodies(std::string_view scene,
                                                        std::span<const uint64_t> ids,
                                                        const CallOptions& call) {
  v1::GetBodiesRequest request;
  request.set_scene(std::string(scene));
  for (uint64_t id : ids) request.add_ids(id);
  v1::GetBodiesResponse response;
  auto context = NewContext(scene, true, call);
  absl::Status status = FromGrpcStatus(stub_->GetBodies(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::QueryResponse> Client::Raycast(const v1::RaycastRequest& request,
                                                  const CallOptions& call) {
  v1::QueryResponse response;
  auto context = NewContext(request.scene(), true, call);
  absl::Status status = FromGrpcStatus(stub_->Raycast(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::QueryResponse> Client::SphereCast(const v1::SphereCastRequest& request,
                                                     const CallOptions& call) {
  v1::QueryResponse response;
  auto context = NewContext(request.scene(), true, call);
  absl::Status status = FromGrpcStatus(stub_->SphereCast(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::QueryResponse> Client::Overlap(const v1::OverlapRequest& request,
                                                  const CallOptions& call) {
  v1::QueryResponse response;
  auto context = NewContext(request.scene(), true, call);
  absl::Status status = FromGrpcStatus(stub_->Overlap(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<std::unique_ptr<UpdateWriter>> Client::OpenUpdateStream(std::string_view scene,
                                                                       uint64_t client_id,
                                                                       uint64_t first_sequence,
                                                                       const CallOptions& call) {
  std::unique_ptr<grpc::ClientContext> context = NewContext(scene, false, call);
  auto stream = stub_->UpdateStream(context.get());
  if (stream == nullptr) return absl::InternalError("update stream: could not be opened");
  return std::make_unique<UpdateWriter>(std::move(context), std::move(stream), client_id,
                                        first_sequence);
}

absl::StatusOr<std::unique_ptr<QueryStreamSession>> Client::OpenQueryStream(
    std::string_view scene, const CallOptions& call) {
  std::unique_ptr<grpc::ClientContext> context = NewContext(scene, false, call);
  auto stream = stub_->QueryStream(context.get());
  if (stream == nullptr) return absl::InternalError("query stream: could not be opened");
  return std::make_unique<QueryStreamSession>(std::move(context), std::move(stream));
}

absl::StatusOr<std::unique_ptr<WatchStream>> Client::Watch(const v1::WatchRequest& request,
                                                           const CallOptions& call) {
  std::unique_ptr<grpc::ClientContext> context = NewContext(request.scene(), false, call);
  auto stream = stub_->Watch(context.get(), request);
  if (stream == nullptr) return absl::InternalError("watch: could not be opened");
  return std::make_unique<WatchStream>(std::move(context), std::move(stream));
}

absl::StatusOr<std::unique_ptr<InterestStream>> Client::OpenInterest(
    std::string_view scene, std::vector<v1::Observer> observers, InterestOptions options) {
  return InterestStream::Open(this, scene, std::move(observers), options);
}

absl::Status Client::ExportScene(std::string_view scene, ExportSink sink,
                                 uint32_t max_bodies_per_chunk, const CallOptions& call) {
  v1::ExportSceneRequest request;
  request.set_scene(std::string(scene));
  request.set_max_bodies_per_chunk(max_bodies_per_chunk);
  std::unique_ptr<grpc::ClientContext> context = NewContext(scene, false, call);
  std::unique_ptr<grpc::ClientReader<v1::SceneExportMessage>> reader =
      stub_->ExportScene(context.get(), request);
  v1::SceneExportMessage message;
  absl::Status sink_status;
  while (reader->Read(&message)) {
    sink_status = sink(message);
    if (!sink_status.ok()) {
      context->TryCancel();
      break;
    }
  }
  absl::Status status = FromGrpcStatus(reader->Finish());
  return sink_status.ok() ? status : sink_status;
}

absl::StatusOr<v1::SceneInfo> Client::ImportScene(ImportSource source, std::string_view scene,
                                                  bool replace, const CallOptions& call) {
  return Import(std::move(source), scene, replace, /*check_only=*/false, call);
}

absl::StatusOr<v1::SceneInfo> Client::CheckImport(ImportSource source, std::string_view scene,
                                                  bool replace, const CallOptions& call) {
  return Import(std::move(source), scene, replace, /*check_only=*/true, call);
}

absl::StatusOr<v1::SceneInfo> Client::Import(ImportSource source, std::string_view scene,
                                             bool replace, bool check_only,
                                             const CallOptions& call) {
  // The first message is read before the call opens: without `scene`, the scene is named by the
  // export's header, and the x-collide-scene header (a router's key) must carry that name.
  v1::ImportSceneRequest request;
  absl::StatusOr<bool> more = source(request.mutable_message());
  if (!more.ok()) return more.status();
  const std::string name = scene.empty() ? request.message().header().scene() : std::string(scene);
  std::unique_ptr<grpc::ClientContext> context = NewContext(name, false, call);
  v1::ImportSceneResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::ImportSceneRequest>> writer =
      stub_->ImportScene(context.get(), &response);
  request.set_scene(std::string(scene));
  request.set_replace(replace);
  request.set_check_only(check_only);
  absl::Status source_status;
  bool first = true;
  while (*more) {
    // A write fails once the server ended the call; Finish says why.
    if (!writer->Write(request)) break;
    if (first) {
      request.clear_scene();
      request.clear_replace();
      request.clear_check_only();
      first = false;
    }
    more = source(request.mutable_message());
    if (!more.ok()) {
      source_status = more.status();
      break;
    }
  }
  if (!source_status.ok()) {
    // Nothing is imported from a stream that does not end properly.
    context->TryCancel();
    writer->Finish().error_code();
    return source_status;
  }
  writer->WritesDone();
  absl::Status status = FromGrpcStatus(writer->Finish());
  if (!status.ok()) return status;
  return std::move(*response.mutable_scene());
}

namespace {

absl::StatusOr<v1::SceneInfo> CallSetSceneMoving(v1::Collide::Stub& stub,
                                                 std::unique_ptr<grpc::ClientContext> context,
                                                 const v1::SetSceneMovingRequest& request) {
  v1::SetSceneMovingResponse response;
  absl::Status status = FromGrpcStatus(stub.SetSceneMoving(context.get(), request, &response));
  if (!status.ok()) return status;
  return std::move(*response.mutable_scene());
}

}  // namespace

absl::StatusOr<v1::SceneInfo> Client::SetSceneMoving(std::string_view scene,
                                                     std::string_view destination,
                                                     const CallOptions& call) {
  v1::SetSceneMovingRequest request;
  request.set_scene(std::string(scene));
  request.set_destination(std::string(destination));
  return CallSetSceneMoving(*stub_, NewContext(scene, true, call), request);
}

absl::StatusOr<v1::SceneInfo> Client::ClearSceneMoving(std::string_view scene,
                                                       const CallOptions& call) {
  v1::SetSceneMovingRequest request;
  request.set_scene(std::string(scene));
  request.set_clear(true);
  return CallSetSceneMoving(*stub_, NewContext(scene, true, call), request);
}

}  // namespace collide::client
