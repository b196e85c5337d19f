#pragma once

#include <optional>

#include "client/cli/args.h"
#include "client/cli/command.h"
#include "collide/v1/collide.pb.h"

namespace collide::cli {

// Flags shared by several commands, read from `args` (problems recorded in args.status()).

/// Exactly one of --sphere=R, --box=HX,HY,HZ, --capsule=R,HALF_HEIGHT.
v1::Shape ShapeFromFlags(Args& args);
/// A body's shape: ShapeFromFlags, or an instance of an asset (--mesh=NAME or
/// --heightfield=NAME, with --scale=S).
v1::Shape BodyShapeFromFlags(Args& args);
/// --pos=X,Y,Z (default origin, or required) and --rot=X,Y,Z,W (absent: identity).
v1::Pose PoseFromFlags(Args& args, bool position_required);
/// --category=N, --mask=N, --exclude=ID,ID...; nullopt when none is given.
std::optional<v1::Filter> FilterFromFlags(Args& args);
/// --mode=closest|any|all, or --all / --any; `fallback` when none is given.
v1::Mode ModeFromFlags(Args& args, v1::Mode fallback);

// The flag specs of the above, for command tables.

/// --sphere=R.
inline const FlagSpec kSphereFlag{"sphere", "R", "a sphere of radius R"};
/// --box=HX,HY,HZ.
inline const FlagSpec kBoxFlag{"box", "HX,HY,HZ", "a box of these half extents"};
/// --capsule=R,HALF_HEIGHT.
inline const FlagSpec kCapsuleFlag{"capsule", "R,HALF_HEIGHT",
                                   "a capsule along local y: radius, half the inner segment"};
/// --mesh=NAME.
inline const FlagSpec kMeshFlag{"mesh", "NAME",
                                "an instance of the scene's mesh asset NAME (collide mesh upload)"};
/// --heightfield=NAME.
inline const FlagSpec kHeightfieldFlag{"heightfield", "NAME",
                                       "an instance of the scene's heightfield asset NAME"};
/// --scale=S.
inline const FlagSpec kScaleFlag{"scale", "S",
                                 "with --mesh or --heightfield: a uniform scale (default 1)"};
/// --rot=X,Y,Z,W.
inline const FlagSpec kRotFlag{"rot", "X,Y,Z,W",
                               "rotation as a unit quaternion (default identity)"};
/// --category=N (of a query).
inline const FlagSpec kCategoryFlag{"category", "N", "query category bits (default all)"};
/// --mask=N (of a query).
inline const FlagSpec kMaskFlag{"mask", "N", "body categories the query hits (default all)"};
/// --exclude=ID,...
inline const FlagSpec kExcludeFlag{"exclude", "ID,...", "body ids never hit"};
/// --mode=closest|any|all.
inline const FlagSpec kModeFlag{"mode", "closest|any|all", "how many hits to return"};
/// --all.
inline const FlagSpec kAllFlag{"all", "", "every hit, sorted by distance (--mode=all)"};
/// --any.
inline const FlagSpec kAnyFlag{"any", "", "any one hit (--mode=any)"};
/// --max_hits=N.
inline const FlagSpec kMaxHitsFlag{"max_hits", "N", "with --all: the most hits (default 64)"};
/// --at_tick=T (Query.at_tick, the unary requests' at_tick).
inline const FlagSpec kAtTickFlag{"at_tick", "T",
                                  "answer at the end of retained tick T (default: now)"};
/// --tick_fraction=F (with --at_tick).
inline const FlagSpec kTickFractionFlag{
    "tick_fraction", "F", "with --at_tick: in [0, 1), interpolate towards the end of T + 1"};
/// --min_version=V (QueryBatch.min_version, the unary requests' min_version).
inline const FlagSpec kMinVersionFlag{"min_version", "V",
                                      "wait until the scene reaches version V (default 0)"};

}  // namespace collide::cli
