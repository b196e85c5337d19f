#include "client/cli/request_flags.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "client/cpp/builders.h"

namespace collide::cli {

v1::Shape ShapeFromFlags(Args& args) {
  int given = args.Has("sphere") + args.Has("box") + args.Has("capsule");
  if (given != 1) {
    args.Fail(absl::InvalidArgumentError("--sphere, --box, --capsule: give exactly one shape"));
    return v1::Shape();
  }
  if (args.Has("sphere")) return client::MakeSphere(args.Float("sphere", 0.0f));
  if (args.Has("box")) {
    std::optional<std::vector<float>> h = args.Floats("box", 3);
    return h ? client::MakeBox((*h)[0], (*h)[1], (*h)[2]) : v1::Shape();
  }
  std::optional<std::vector<float>> c = args.Floats("capsule", 2);
  return c ? client::MakeCapsule((*c)[0], (*c)[1]) : v1::Shape();
}

v1::Shape BodyShapeFromFlags(Args& args) {
  const int assets = args.Has("mesh") + args.Has("heightfield");
  if (assets == 0) {
    if (args.Has("scale")) {
      args.Fail(absl::InvalidArgumentError("--scale: only with --mesh or --heightfield"));
    }
    return ShapeFromFlags(args);
  }
  if (assets + args.Has("sphere") + args.Has("box") + args.Has("capsule") != 1) {
    args.Fail(absl::InvalidArgumentError(
        "--sphere, --box, --capsule, --mesh, --heightfield: give exactly one shape"));
    return v1::Shape();
  }
  const float scale = args.Float("scale", 1.0f);
  return args.Has("mesh") ? client::MakeMesh(args.String("mesh"), scale)
                          : client::MakeHeightfield(args.String("heightfield"), scale);
}

v1::Pose PoseFromFlags(Args& args, bool position_required) {
  if (position_required) args.Require("pos");
  v1::Pose pose = client::MakePose(args.Vec3("pos", v1::Vec3()));
  if (std::optional<v1::Quat> rotation = args.Quat("rot")) *pose.mutable_rotation() = *rotation;
  return pose;
}

std::optional<v1::Filter> FilterFromFlags(Args& args) {
  if (!args.Has("category") && !args.Has("mask") && !args.Has("exclude")) return std::nullopt;
  v1::Filter filter;
  if (args.Has("category")) {
    filter.set_category(args.Uint32("category", ~0u));
  }
  if (args.Has("mask")) filter.set_mask(args.Uint32("mask", ~0u));
  for (uint64_t id : args.Uint64List("exclude")) filter.add_excluded_ids(id);
  return filter;
}

v1::Mode ModeFromFlags(Args& args, v1::Mode fallback) {
  int given = args.Has("mode") + args.Has("all") + args.Has("any");
  if (given > 1) {
    args.Fail(absl::InvalidArgumentError("--mode, --all, --any: give at most one"));
    return fallback;
  }
  if (args.Bool("all")) return v1::MODE_ALL;
  if (args.Bool("any")) return v1::MODE_ANY;
  if (!args.Has("mode")) return fallback;
  std::string mode = args.String("mode");
  if (mode == "closest") return v1::MODE_CLOSEST;
  if (mode == "any") return v1::MODE_ANY;
  if (mode == "all") return v1::MODE_ALL;
  args.Fail(absl::InvalidArgumentError(
      absl::StrCat("--mode: expected closest, any or all, got \"", mode, "\"")));
  return fallback;
}

}  // namespace collide::cli
