#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "query/collision_world.h"

namespace collide {

/// A scene's index from body id to BodyHandle: a hash set of the handles of a world's live
/// bodies, hashed and compared by the id each handle's body has in the world's body table. A
/// slot holds 4 bytes (and a control byte) instead of a map's 16 for the id and the handle: at
/// 1M bodies (2^21 slots) 10.5 instead of 35.7 bytes per body. A lookup compares the id of a
/// candidate's body in the table, which the op that looked it up reads next anyway.
///
/// The id a handle is indexed by is read from the world whenever it is hashed, so a body must be
/// erased while it is still in the world with that id (before CollisionWorld::Remove), and the
/// world never changes a live body's id. Not thread-safe: it follows the world's lock.
class BodyIds {
 public:
  /// An index over `world`'s bodies (none indexed yet); `world` outlives it.
  explicit BodyIds(const CollisionWorld* world) : set_(0, Hash{world}, Eq{world}) {}

  /// The handle of the live body with `id`, or kNullBody.
  BodyHandle Find(uint64_t id) const {
    auto it = set_.find(Id{id});
    return it == set_.end() ? kNullBody : *it;
  }
  /// True when a body with `id` is indexed.
  bool Contains(uint64_t id) const { return set_.contains(Id{id}); }
  /// Indexes the live body in `handle`; false (and nothing changes) when a body with its id is
  /// indexed already.
  bool Insert(BodyHandle handle) { return set_.insert(handle).second; }
  /// Removes the body with `id` (still in the world); no-op when none is indexed.
  void Erase(uint64_t id) {
    auto it = set_.find(Id{id});
    if (it != set_.end()) set_.erase(it);
  }
  /// Room for `n` bodies without rehashing.
  void Reserve(size_t n) { set_.reserve(n); }

  /// Bodies indexed.
  size_t size() const { return set_.size(); }
  /// Bytes held: the slots and their control bytes (absl's layout: one control byte per slot and
  /// a group's worth of cloned ones).
  size_t MemoryBytes() const {
    return set_.capacity() == 0 ? 0 : set_.capacity() * (sizeof(BodyHandle) + 1) + 16;
  }

  /// The indexed handles, in no particular order.
  auto begin() const { return set_.begin(); }
  auto end() const { return set_.end(); }

 private:
  // A looked-up id (a distinct type: a handle and an id are both integers).
  struct Id {
    uint64_t value;
  };
  struct Hash {
    using is_transparent = void;
    const CollisionWorld* world;
    size_t operator()(Id id) const { return absl::Hash<uint64_t>{}(id.value); }
    size_t operator()(BodyHandle handle) const {
      return absl::Hash<uint64_t>{}(world->body(handle).id);
    }
  };
  struct Eq {
    using is_transparent = void;
    const CollisionWorld* world;
    bool operator()(BodyHandle a, BodyHandle b) const {
      return world->body(a).id == world->body(b).id;
    }
    bool operator()(Id a, BodyHandle b) const { return a.value == world->body(b).id; }
    bool operator()(BodyHandle a, Id b) const { return world->body(a).id == b.value; }
  };

  absl::flat_hash_set<BodyHandle, Hash, Eq> set_;
};

}  // namespace collide
