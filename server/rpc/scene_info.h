#pragma once

#include "collide/v1/collide.pb.h"
#include "scene/scene.h"
#include "server/infra/replication_control.h"
#include "server/service_context.h"

namespace collide {

/// A scene as GetScene, ListScenes and the scene rpcs answer it (SceneInfoToProto), with, for a
/// replicated scene, its owner and this server's lag (SceneInfo.replication).
void DescribeScene(const ServiceContext& context, const Scene& scene, v1::SceneInfo* out);

}  // namespace collide
