#include "server/infra/replication_proto.h"

#include <cmath>
#include <cstdint>

namespace collide {

void ReplicationToProto(const SceneReplicaFigures& figures, v1::SceneReplication* out) {
  out->set_owner(figures.owner_address);
  out->set_owned(figures.owner);
  out->set_epoch(figures.epoch);
  out->set_applied_sequence(figures.applied_sequence);
  out->set_lag_sequences(figures.lag_sequences);
  out->set_lag_ms(static_cast<uint64_t>(std::llround(figures.lag_seconds * 1000.0)));
  out->set_state(figures.state);
}

}  // namespace collide
