// collide raycast | spherecast | overlap | point | aabb.

#include <optional>
#include <utility>

#include "client/cli/command.h"
#include "client/cli/request_flags.h"
#include "client/cpp/builders.h"
#include "client/cpp/grpc_status.h"

namespace collide::cli {
namespace {

// The default --max of casts, in length units.
constexpr float kDefaultMaxDistance = 100.0f;

uint32_t MaxHits(Args& args) { return args.Uint32("max_hits", 0); }

// --at_tick and --tick_fraction into a request (unary or Query) that has both fields.
template <typename Request>
void SetTick(Args& args, Request& request) {
  if (args.Has("at_tick")) request.set_at_tick(args.Uint64("at_tick", 0));
  if (args.Has("tick_fraction")) request.set_tick_fraction(args.Float("tick_fraction", 0.0f));
}

absl::Status Raycast(CommandContext& c) {
  Args& args = c.args;
  v1::RaycastRequest request;
  request.set_scene(args.positional()[0]);
  *request.mutable_ray() = client::MakeRaycast(args.RequiredVec3("from"), args.RequiredVec3("dir"),
                                               args.Float("max", kDefaultMaxDistance));
  if (std::optional<v1::Filter> filter = FilterFromFlags(args)) *request.mutable_filter() = *filter;
  request.set_mode(ModeFromFlags(args, v1::MODE_CLOSEST));
  request.set_max_hits(MaxHits(args));
  SetTick(args, request);
  request.set_min_version(args.Uint64("min_version", 0));
  if (!args.ok()) return args.status();
  absl::StatusOr<v1::QueryResponse> response = c.client.Raycast(request);
  if (!response.ok()) return response.status();
  c.out.Print(*response, FormatHits(*response, HitKind::kCast));
  return absl::OkStatus();
}

absl::Status SphereCast(CommandContext& c) {
  Args& args = c.args;
  args.Require("radius");
  v1::SphereCastRequest request;
  request.set_scene(args.positional()[0]);
  *request.mutable_cast() =
      client::MakeSphereCast(args.RequiredVec3("from"), args.RequiredVec3("dir"),
                             args.Float("max", kDefaultMaxDistance), args.Float("radius", 0.0f));
  if (std::optional<v1::Filter> filter = FilterFromFlags(args)) *request.mutable_filter() = *filter;
  request.set_mode(ModeFromFlags(args, v1::MODE_CLOSEST));
  request.set_max_hits(MaxHits(args));
  SetTick(args, request);
  request.set_min_version(args.Uint64("min_version", 0));
  if (!args.ok()) return args.status();
  absl::StatusOr<v1::QueryResponse> response = c.client.SphereCast(request);
  if (!response.ok()) return response.status();
  c.out.Print(*response, FormatHits(*response, HitKind::kCast));
  return absl::OkStatus();
}

absl::Status Overlap(CommandContext& c) {
  Args& args = c.args;
  v1::OverlapRequest request;
  request.set_scene(args.positional()[0]);
  *request.mutable_overlap() =
      client::MakeOverlap(ShapeFromFlags(args), PoseFromFlags(args, /*position_required=*/false));
  if (std::optional<v1::Filter> filter = FilterFromFlags(args)) *request.mutable_filter() = *filter;
  request.set_mode(ModeFromFlags(args, v1::MODE_ALL));
  request.set_max_hits(MaxHits(args));
  request.set_detail(args.Bool("detail"));
  SetTick(args, request);
  request.set_min_version(args.Uint64("min_version", 0));
  if (!args.ok()) return args.status();
  absl::StatusOr<v1::QueryResponse> response = c.client.Overlap(request);
  if (!response.ok()) return response.status();
  c.out.Print(*response, FormatHits(*response, request.detail() ? HitKind::kOverlapDetail
                                                                : HitKind::kOverlap));
  return absl::OkStatus();
}

// Point and AABB queries have no unary rpc: they run as a one-query batch on a QueryStream.
absl::Status RunStreamQuery(CommandContext& c, v1::Query query, HitKind kind) {
  Args& args = c.args;
  if (std::optional<v1::Filter> filter = FilterFromFlags(args)) *query.mutable_filter() = *filter;
  query.set_mode(ModeFromFlags(args, v1::MODE_ALL));
  query.set_max_hits(MaxHits(args));
  query.set_request_id(1);
  SetTick(args, query);
  v1::QueryBatch batch;
  batch.set_min_version(args.Uint64("min_version", 0));
  if (!args.ok()) return args.status();
  batch.set_scene(args.positional()[0]);
  *batch.add_queries() = std::move(query);
  absl::StatusOr<std::unique_ptr<client::QueryStreamSession>> session =
      c.client.OpenQueryStream(args.positional()[0]);
  if (!session.ok()) return session.status();
  absl::StatusOr<v1::QueryBatchResult> result = (*session)->Run(batch);
  if (!result.ok()) return result.status();
  if (absl::Status error = client::BatchStatus(*result); !error.ok()) return error;
  if (result->results_size() != 1) {
    return absl::InternalError("query stream: expected one result for one query");
  }
  if (absl::Status error = client::ResultStatus(result->results(0)); !error.ok()) return error;
  absl::Status finished = (*session)->Finish();
  if (!finished.ok()) return finished;
  v1::QueryResponse response;
  response.set_version(result->version());
  *response.mutable_hits() = result->results(0).hits();
  response.set_truncated(result->results(0).truncated());
  c.out.Print(response, FormatHits(response, kind));
  return absl::OkStatus();
}

absl::Status Point(CommandContext& c) {
  c.args.Require("radius");
  v1::Query query;
  *query.mutable_point() =
      client::MakePoint(c.args.RequiredVec3("pos"), c.args.Float("radius", 0.0f));
  return RunStreamQuery(c, std::move(query), HitKind::kPoint);
}

absl::Status Aabb(CommandContext& c) {
  v1::Query query;
  *query.mutable_aabb() =
      client::MakeRegion(c.args.RequiredVec3("min"), c.args.RequiredVec3("max"));
  return RunStreamQuery(c, std::move(query), HitKind::kRegion);
}

// `flags` and those every query command has: filter, mode, the past tick, the version to wait for.
std::vector<FlagSpec> WithFilterAndMode(std::vector<FlagSpec> flags) {
  for (const FlagSpec& flag :
       {kCategoryFlag, kMaskFlag, kExcludeFlag, kModeFlag, kAllFlag, kAnyFlag, kMaxHitsFlag,
        kAtTickFlag, kTickFractionFlag, kMinVersionFlag}) {
    flags.push_back(flag);
  }
  return flags;
}

}  // namespace

std::vector<Command> QueryCommands() {
  return {
      {.name = "raycast",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Casts a ray; prints the closest hit by default (Raycast).",
       .flags = WithFilterAndMode({{"from", "X,Y,Z", "the ray's origin (required)"},
                                   {"dir", "X,Y,Z", "its direction, any length (required)"},
                                   {"max", "D", "how far to look (default 100)"}}),
       .run = Raycast},
      {.name = "spherecast",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Sweeps a ball along a ray; prints the closest hit by default (SphereCast).",
       .flags = WithFilterAndMode({{"from", "X,Y,Z", "the ball's start (required)"},
                                   {"dir", "X,Y,Z", "the sweep direction (required)"},
                                   {"radius", "R", "the ball's radius (required)"},
                                   {"max", "D", "how far to sweep (default 100)"}}),
       .run = SphereCast},
      {.name = "overlap",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Lists the bodies a posed shape overlaps; all of them by default (Overlap).",
       .flags = WithFilterAndMode({kSphereFlag,
                                   kBoxFlag,
                                   kCapsuleFlag,
                                   {.name = "pos",
                                    .value = "X,Y,Z",
                                    .help = "the shape's position (default 0,0,0)",
                                    .alias = "at"},
                                   kRotFlag,
                                   {"detail", "", "depth, contact point and normal per hit"}}),
       .run = Overlap},
      {.name = "point",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Lists the bodies within a radius of a point, nearest first (QueryStream).",
       .flags = WithFilterAndMode(
           {{.name = "pos", .value = "X,Y,Z", .help = "the point (required)", .alias = "at"},
            {"radius", "R", "the radius; 0 finds bodies containing it"}}),
       .run = Point},
      {.name = "aabb",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Lists the bodies whose bounds overlap a box (QueryStream).",
       .flags = WithFilterAndMode({{"min", "X,Y,Z", "the box's lower corner (required)"},
                                   {"max", "X,Y,Z", "its upper corner (required)"}}),
       .run = Aabb},
  };
}

}  // namespace collide::cli
