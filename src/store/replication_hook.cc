#include "store/replication_hook.h"

#include "collide/v1/storage.pb.h"

namespace collide {

void AppendReplicationPosition(const ReplicationPosition& position, bool snapshot,
                               std::string* payload) {
  // A message holding only the field; serialized after the record's own bytes, it parses as
  // the record with the field set (the same field number in LogRecord and SceneSnapshot would
  // not be needed: each message has its own).
  storage::v1::ReplicationPosition* out;
  storage::v1::LogRecord record;
  storage::v1::SceneSnapshot snap;
  out = snapshot ? snap.mutable_replicated() : record.mutable_replicated();
  out->set_incarnation(position.incarnation);
  out->set_epoch(position.epoch);
  out->set_sequence(position.sequence);
  payload->append(snapshot ? snap.SerializeAsString() : record.SerializeAsString());
}

}  // namespace collide
