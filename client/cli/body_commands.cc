// collide body add | move | remove | get.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/command.h"
#include "client/cli/request_flags.h"
#include "client/cpp/builders.h"
#include "client/cpp/grpc_status.h"

namespace collide::cli {
namespace {

absl::Status AddBody(CommandContext& c) {
  Args& args = c.args;
  args.Require("id");
  v1::UpsertBodiesRequest request;
  request.set_scene(args.positional()[0]);
  v1::Body* body = request.add_bodies();
  body->set_id(args.Uint64("id", 0));
  *body->mutable_shape() = BodyShapeFromFlags(args);
  *body->mutable_pose() = PoseFromFlags(args, /*position_required=*/false);
  if (args.Has("category")) body->set_category(args.Uint32("category", 1));
  if (args.Has("mask")) body->set_mask(args.Uint32("mask", ~0u));
  body->set_user_data(args.Uint64("user_data", 0));
  if (args.Bool("static")) body->set_kind(v1::BODY_KIND_STATIC);
  if (!args.ok()) return args.status();
  absl::StatusOr<v1::WriteResponse> write = c.client.UpsertBodies(request);
  if (!write.ok()) return write.status();
  c.out.Print(*write, absl::StrCat("upserted body ", body->id(), " into ", request.scene(), ": ",
                                   FormatWrite(*write)));
  return absl::OkStatus();
}

absl::Status MoveBody(CommandContext& c) {
  Args& args = c.args;
  args.Require("id");
  uint64_t id = args.Uint64("id", 0);
  v1::Pose pose = PoseFromFlags(args, /*position_required=*/true);
  uint64_t client_id = args.Uint64("client_id", 0);
  uint64_t sequence = args.Uint64("sequence", 1);
  if (!args.ok()) return args.status();
  if (!args.Has("rot")) {
    // Keeps the body's rotation: a set_pose without one would reset it to identity. A body that
    // is not there is left for the update to report (NOT_FOUND).
    absl::StatusOr<v1::GetBodiesResponse> current =
        c.client.GetBodies(args.positional()[0], std::vector<uint64_t>{id});
    if (!current.ok()) return current.status();
    for (const v1::Body& body : current->bodies()) {
      if (body.id() == id && body.pose().has_rotation()) {
        *pose.mutable_rotation() = body.pose().rotation();
      }
    }
  }
  v1::UpdateBatch batch;
  batch.set_scene(args.positional()[0]);
  *batch.add_ops() = client::MakeSetPoseOp(id, pose);
  absl::StatusOr<std::unique_ptr<client::UpdateWriter>> writer =
      c.client.OpenUpdateStream(args.positional()[0], client_id, sequence);
  if (!writer.ok()) return writer.status();
  absl::StatusOr<v1::UpdateAck> ack = (*writer)->Apply(std::move(batch));
  if (!ack.ok()) return ack.status();
  if (absl::Status error = client::AckStatus(*ack); !error.ok()) return error;
  absl::Status finished = (*writer)->Finish();
  if (!finished.ok()) return finished;
  c.out.Print(*ack, absl::StrCat("moved body ", id, " in ", args.positional()[0], ": version ",
                                 ack->version(), ack->durable() ? " (durable)" : "",
                                 ack->duplicate() ? " (duplicate, not applied again)" : ""));
  return absl::OkStatus();
}

absl::Status RemoveBodies(CommandContext& c) {
  c.args.Require("id");
  std::vector<uint64_t> ids = c.args.Uint64List("id");
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<v1::WriteResponse> write = c.client.RemoveBodies(c.args.positional()[0], ids);
  if (!write.ok()) return write.status();
  c.out.Print(*write, absl::StrCat("removed ", ids.size(), ids.size() == 1 ? " body" : " bodies",
                                   " (", absl::StrJoin(ids, ", "), ") from ",
                                   c.args.positional()[0], ": ", FormatWrite(*write)));
  return absl::OkStatus();
}

absl::Status GetBodies(CommandContext& c) {
  std::vector<uint64_t> ids = c.args.Uint64List("id");
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<v1::GetBodiesResponse> response = c.client.GetBodies(c.args.positional()[0], ids);
  if (!response.ok()) return response.status();
  std::string text = absl::StrCat("version ", response->version(), ": ", response->bodies_size(),
                                  response->bodies_size() == 1 ? " body" : " bodies", "\n");
  for (const v1::Body& body : response->bodies())
    absl::StrAppend(&text, "  ", FormatBody(body), "\n");
  if (response->missing_ids_size() > 0) {
    absl::StrAppend(&text, "  missing: ", absl::StrJoin(response->missing_ids(), ", "), "\n");
  }
  c.out.Print(*response, text);
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> BodyCommands() {
  return {
      {.name = "body add",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Creates or replaces one body (UpsertBodies; writer).",
       .flags = {{"id", "N", "the body's id (required)"},
                 kSphereFlag,
                 kBoxFlag,
                 kCapsuleFlag,
                 kMeshFlag,
                 kHeightfieldFlag,
                 kScaleFlag,
                 {"pos", "X,Y,Z", "world position (default 0,0,0)"},
                 kRotFlag,
                 {"category", "N", "the categories the body belongs to (default 1)"},
                 {"mask", "N", "the query categories that may hit it (default all)"},
                 {"user_data", "N", "opaque data kept with the body"},
                 {"static", "", "a static body (its own tree)"}},
       .run = AddBody},
      {.name = "body move",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Moves one body, as one batch of an UpdateStream (UpdateStream; writer).",
       .flags = {{"id", "N", "the body's id (required)"},
                 {"pos", "X,Y,Z", "new world position (required)"},
                 {"rot", "X,Y,Z,W", "new rotation, a unit quaternion (default: the body's own)"},
                 {"client_id", "N", "deduplication id of the sender (default 0: none)"},
                 {"sequence", "N", "the batch's client_sequence (default 1)"}},
       .run = MoveBody},
      {.name = "body remove",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Removes bodies, as one batch (RemoveBodies; writer).",
       .flags = {{"id", "ID,...", "the ids to remove (required; each must exist)"}},
       .run = RemoveBodies},
      {.name = "body get",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Shows bodies (GetBodies).",
       .flags = {{"id", "ID,...", "the ids to show (default: every body)"}},
       .run = GetBodies},
  };
}

}  // namespace collide::cli
