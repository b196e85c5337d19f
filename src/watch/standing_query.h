#pragma once

#include "scene/scene_observer.h"
#include "watch/scene_mirror.h"

namespace collide {

/// A standing query of one scene that a WatchHub runs on its worker, on the hub's SceneMirror:
/// a Watcher (fences, contact watches) or an InterestWatcher (observers' relevant sets). The hub
/// calls it from one worker at a time, in version order: Start once (its starting state), then
/// OnApplied for every later batch, Resync when the hub lost batches (its backlog overflowed),
/// Refresh at the end of every step (changes its client made meanwhile take effect) and
/// OnDeleted once when the scene goes. The mirror is at the version the call is about.
class StandingQuery {
 public:
  virtual ~StandingQuery() = default;

  /// What the query reads of the mirror besides its bodies (the hub keeps it from the query's
  /// start on).
  virtual SceneMirror::Parts needs() const = 0;
  /// Computes the starting state at `mirror` and queues it.
  virtual void Start(const SceneMirror& mirror) = 0;
  /// Computes the state at `mirror` anew (batches were missed) and queues it as a resync.
  virtual void Resync(const SceneMirror& mirror) = 0;
  /// The batch `batch` produced `mirror`'s version. It holds the batch's change records, unless
  /// no query of the scene reads those of a batch of its size (ReadsChanges): then only its
  /// moves (AppliedBatch::moves; the mirror is already past them).
  virtual void OnApplied(const AppliedBatch& batch, const SceneMirror& mirror) = 0;
  /// Whether OnApplied reads the change records of a batch that touched `touched` bodies. When
  /// no query of a scene does, its hub writes none for a batch of moves. Default: true.
  virtual bool ReadsChanges(size_t /*touched*/) const { return true; }
  /// At the end of every step of the hub (after its batches), and after WatchHub::Poke: changes
  /// the query's client asked for since take effect at `mirror`'s version. Default: nothing.
  virtual void Refresh(const SceneMirror& /*mirror*/) {}
  /// The scene was deleted: no call follows.
  virtual void OnDeleted() = 0;
};

}  // namespace collide
