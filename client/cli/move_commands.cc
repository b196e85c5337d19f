// collide scene move: a live move of one scene to another server (client/cpp/scene_move.h).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command.h"
#include "client/cpp/scene_move.h"
#include "google/protobuf/struct.pb.h"

namespace collide::cli {
namespace {

google::protobuf::Value Number(double value) {
  google::protobuf::Value out;
  out.set_number_value(value);
  return out;
}
google::protobuf::Value Text(const std::string& value) {
  google::protobuf::Value out;
  out.set_string_value(value);
  return out;
}

// --clear: the mark of a failed move, cleared by hand.
absl::Status ClearMark(CommandContext& c, const std::string& scene) {
  absl::StatusOr<v1::SceneInfo> cleared = c.client.ClearSceneMoving(scene);
  if (!cleared.ok()) return cleared.status();
  v1::SetSceneMovingResponse response;
  *response.mutable_scene() = *cleared;
  c.out.Print(response, absl::StrCat("scene ", scene, " is no longer moving: it accepts writes"));
  return absl::OkStatus();
}

absl::Status MoveScene(CommandContext& c) {
  const std::string& scene = c.args.positional()[0];
  const bool clear = c.args.Bool("clear");
  const std::string to = c.args.String("to");
  client::MoveOptions options;
  options.replace = c.args.Bool("replace");
  options.verify = !c.args.Bool("no_verify");
  options.max_bodies_per_chunk = c.args.Uint32("chunk_bodies", 0);
  const std::string to_token = c.args.String("to_token", c.client.options().bearer_token);
  if (clear && c.args.Has("to")) {
    c.args.Fail(absl::InvalidArgumentError("--clear: takes no --to"));
  } else if (!clear && to.empty()) {
    c.args.Fail(absl::InvalidArgumentError("--to: the destination's address is required"));
  }
  if (!c.args.ok()) return c.args.status();
  if (clear) return ClearMark(c, scene);

  client::ClientOptions destination_options = c.client.options();
  destination_options.address = to;
  destination_options.bearer_token = to_token;
  absl::StatusOr<std::unique_ptr<client::Client>> destination =
      client::Client::Connect(destination_options);
  if (!destination.ok()) return destination.status();
  absl::StatusOr<client::MoveReport> report =
      client::MoveScene(c.client, **destination, scene, to, options);
  if (!report.ok()) return report.status();

  google::protobuf::Struct result;
  auto& fields = *result.mutable_fields();
  fields["scene"] = Text(report->scene);
  fields["destination"] = Text(report->destination);
  // Versions are JSON numbers: exact up to 2^53.
  fields["version"] = Number(static_cast<double>(report->version));
  fields["tick"] = Number(static_cast<double>(report->tick));
  fields["bodies"] = Number(static_cast<double>(report->bodies));
  fields["chunks"] = Number(static_cast<double>(report->chunks));
  fields["crc32c"] = Number(static_cast<double>(report->crc32c));
  fields["pause_ms"] = Number(absl::ToDoubleMilliseconds(report->pause));
  fields["total_ms"] = Number(absl::ToDoubleMilliseconds(report->total));
  fields["bodies_per_second"] = Number(report->bodies_per_second);
  google::protobuf::ListValue* steps = fields["steps"].mutable_list_value();
  for (const client::MoveStep& step : report->steps) {
    google::protobuf::Struct entry;
    auto& e = *entry.mutable_fields();
    e["name"] = Text(step.name);
    e["ms"] = Number(absl::ToDoubleMilliseconds(step.duration));
    e["detail"] = Text(step.detail);
    *steps->add_values()->mutable_struct_value() = entry;
  }
  c.out.Print(result, client::MoveTranscript(*report));
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> MoveCommands() {
  return {
      {.name = "scene move",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Moves a scene to another server: read-only here, exported, imported there, "
                  "checked, deleted here (SetSceneMoving, ExportScene, ImportScene, "
                  "DeleteScene; admin on both).",
       .flags = {{"to", "ADDRESS", "the destination server (host:port); writers are told it"},
                 {"to_token", "TOKEN", "the destination's token (default: --token)"},
                 {"replace", "", "replace a scene of that name at the destination"},
                 {"no_verify", "",
                  "skip the export back from the destination (version and body count are "
                  "still compared)"},
                 {"chunk_bodies", "N", "the most bodies per chunk (default 4096)"},
                 {"clear", "",
                  "clear the mark of a failed move instead (the scene accepts writes again)"}},
       .run = MoveScene},
  };
}

}  // namespace collide::cli
