// collide-scenario-cpp: the cross-language scenario through the C++ client.
//
// Creates --scene (default options), upserts five bodies in one UpsertBodies call, runs five
// unary queries (a..e), prints one JSON object per query on its own line, then deletes the
// scene. The Python and Node programs do the same, so that a test can compare the three outputs.
// Numbers are printed as the shortest text that reads back as the float32 received (as the Python
// and Node clients print them).
//
//   collide-scenario-cpp --address=127.0.0.1:50051 --scene=scenario

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/program_flags.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_runtime.h"
#include "collide/version.h"

ABSL_FLAG(std::string, address, "127.0.0.1:50051", "the collide server, host:port");
ABSL_FLAG(std::string, scene, "scenario",
          "the scene to create (it must not exist); deleted at exit");
ABSL_FLAG(bool, numbers, false,
          "instead of the scenario: read float32 bit patterns (8 hex digits a line) from stdin "
          "and print each as the scenario prints numbers, one a line (tests compare the programs)");

namespace collide::scenario {
namespace {

using client::MakePose;
using client::MakeVec3;

// The shortest decimal text that reads back as the float32 `value`.
std::string Number(float value) {
  char text[64];
  std::to_chars_result end = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, end.ptr);
}

std::string Vec3Json(const v1::Vec3& v) {
  return absl::StrCat("[", Number(v.x()), ", ", Number(v.y()), ", ", Number(v.z()), "]");
}

// One query's line: {"query": "a", "version": 1, "hits": [{...}, ...]}.
std::string ResponseJson(const std::string& name, const v1::QueryResponse& response) {
  std::string line = absl::StrCat("{\"query\": \"", name, "\", \"version\": ", response.version(),
                                  ", \"hits\": [");
  for (int i = 0; i < response.hits_size(); ++i) {
    const v1::Hit& hit = response.hits(i);
    absl::StrAppend(&line, i == 0 ? "" : ", ", "{\"body_id\": ", hit.body_id(),
                    ", \"distance\": ", Number(hit.distance()),
                    ", \"point\": ", Vec3Json(hit.point()),
                    ", \"normal\": ", Vec3Json(hit.normal()), ", \"depth\": ", Number(hit.depth()),
                    ", \"start_overlapping\": ", hit.start_overlapping() ? "true" : "false", "}");
  }
  absl::StrAppend(&line, "]}");
  return line;
}

std::vector<v1::Body> Bodies() {
  std::vector<v1::Body> bodies;
  bodies.push_back(client::MakeBody(1, client::MakeSphere(1), MakePose(MakeVec3(0, 0, 0))));
  bodies.push_back(client::MakeBody(
      2, client::MakeBox(1, 0.5f, 2),
      MakePose(MakeVec3(5, 0, 0), client::MakeQuat(0, 0, 0.25881904f, 0.96592583f))));
  bodies.push_back(client::MakeBody(3, client::MakeCapsule(0.5f, 1), MakePose(MakeVec3(10, 0, 0))));
  v1::Body small = client::MakeBody(4, client::MakeSphere(0.5f), MakePose(MakeVec3(0, 5, 0)));
  small.set_category(2);
  bodies.push_back(small);
  bodies.push_back(
      client::MakeStaticBody(5, client::MakeBox(0.5f, 0.5f, 0.5f), MakePose(MakeVec3(-4, 0, 0))));
  return bodies;
}

absl::Status RunQueries(client::Client& client, const std::string& scene) {
  std::vector<std::pair<std::string, absl::StatusOr<v1::QueryResponse>>> answers;

  v1::RaycastRequest a;
  a.set_scene(scene);
  *a.mutable_ray() = client::MakeRaycast(MakeVec3(-10, 0, 0), MakeVec3(1, 0, 0), 100);
  a.set_mode(v1::MODE_ALL);
  answers.emplace_back("a", client.Raycast(a));

  v1::RaycastRequest b;
  b.set_scene(scene);
  *b.mutable_ray() = client::MakeRaycast(MakeVec3(0, -10, 0), MakeVec3(0, 1, 0), 100);
  b.set_mode(v1::MODE_CLOSEST);
  b.mutable_filter()->set_mask(2);
  answers.emplace_back("b", client.Raycast(b));

  v1::SphereCastRequest c;
  c.set_scene(scene);
  *c.mutable_cast() = client::MakeSphereCast(MakeVec3(0, 0, -10), MakeVec3(0, 0, 1), 20, 0.25f);
  c.set_mode(v1::MODE_ALL);
  answers.emplace_back("c", client.SphereCast(c));

  v1::OverlapRequest d;
  d.set_scene(scene);
  *d.mutable_overlap() =
      client::MakeOverlap(client::MakeSphere(1.5f), MakePose(MakeVec3(4.5f, 0.5f, 0)));
  d.set_detail(true);
  d.set_mode(v1::MODE_ALL);
  answers.emplace_back("d", client.Overlap(d));

  v1::SphereCastRequest e;
  e.set_scene(scene);
  *e.mutable_cast() = client::MakeSphereCast(MakeVec3(-10, 0.8f, 0), MakeVec3(1, 0, 0), 30, 0.4f);
  e.set_mode(v1::MODE_ALL);
  answers.emplace_back("e", client.SphereCast(e));

  for (const auto& [name, answer] : answers) {
    if (!answer.ok())
      return absl::Status(answer.status().code(),
                          absl::StrCat("query ", name, ": ", answer.status().message()));
    std::printf("%s\n", ResponseJson(name, *answer).c_str());
  }
  return absl::OkStatus();
}

// --numbers: each line of stdin, a float32's bits in hex, printed as Number prints it.
int PrintNumbers() {
  char line[64];
  while (std::fgets(line, sizeof(line), stdin) != nullptr) {
    uint32_t bits = 0;
    if (std::sscanf(line, "%8x", &bits) != 1) continue;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    std::printf("%s\n", Number(value).c_str());
  }
  return 0;
}

int Run(const std::string& address, const std::string& scene) {
  client::ClientOptions options;
  options.address = address;
  absl::StatusOr<std::unique_ptr<client::Client>> client = client::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "collide-scenario-cpp: %s\n", client.status().ToString().c_str());
    return 1;
  }
  absl::Status status = (*client)->CreateScene(scene).status();
  if (status.ok()) {
    std::vector<v1::Body> bodies = Bodies();
    status = (*client)->UpsertBodies(scene, bodies).status();
    if (status.ok()) status = RunQueries(**client, scene);
    absl::Status deleted = (*client)->DeleteScene(scene);
    if (status.ok()) status = deleted;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "collide-scenario-cpp: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace collide::scenario

int main(int argc, char** argv) {
  collide::ParseProgramFlags(
      argc, argv,
      {.name = "collide-scenario-cpp",
       .usage = "the cross-language scenario through the C++ client: one JSON line per query.",
       .flags_file = "examples/scenario/cpp/main.cc",
       .version = collide::kVersionLine});
  if (absl::GetFlag(FLAGS_numbers)) return collide::scenario::PrintNumbers();
  collide::client::GrpcRuntime grpc;
  return collide::scenario::Run(absl::GetFlag(FLAGS_address), absl::GetFlag(FLAGS_scene));
}
