#pragma once

#include "collide/v1/collide.pb.h"
#include "server/infra/replication_control.h"

namespace collide {

/// A replicated scene's figures as the API says them (SceneInfo.replication, the viewer's
/// scene page).
void ReplicationToProto(const SceneReplicaFigures& figures, v1::SceneReplication* out);

}  // namespace collide
