#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "store/file_system.h"
#include "store/store_histograms.h"

namespace collide {

/// One segment file of the log.
struct SegmentInfo {
  /// The sequence number of its first record (also in its name).
  uint64_t first_sequence = 0;
  /// The file name inside the data directory.
  std::string name;
  /// Its size in bytes.
  uint64_t bytes = 0;
};

/// Called once when the log hits an I/O error it cannot recover from (a failed write or fsync:
/// after a failed fsync the kernel may have dropped the dirty pages, so nothing written since
/// the last good fsync can be trusted). The default handler stops the process; tests inject one
/// that records the error. Either way the log acknowledges nothing after the error.
using FatalErrorHandler = std::function<void(const absl::Status&)>;

/// Settings of a commit log.
struct CommitLogOptions {
  /// A segment is closed (fsynced) and a new one started once it holds this many bytes; a
  /// segment may exceed it by one group of records.
  uint64_t segment_bytes = 4 << 20;
  /// While written bytes are not yet fsynced, an fsync happens at least this often.
  std::chrono::milliseconds sync_interval{100};
  /// backlogged() reports true while more than this many appended bytes wait to be written.
  uint64_t max_backlog_bytes = 64 << 20;
  /// When set (it must outlive the log), each fsync's duration and each group commit's record
  /// count are observed into it.
  StoreHistograms* histograms = nullptr;
};

/// The segmented append-only log with group commit. Append() frames a record and queues it in
/// memory (it never does I/O); one committer thread writes everything queued in one write() and,
/// when someone waits for durability (or the sync interval has passed), fsyncs once for all of
/// it. Waiters are called back on the committer thread once their record is written or synced.
/// Thread-safe.
class CommitLog {
 public:
  /// Opens the log in `dir` for appending. `segments` are the existing segments (sorted by first
  /// sequence, as recovery found them); the last one, if its records end at `next_sequence` - 1
  /// or it is empty and named `next_sequence`, is appended to (and fsynced first, since its
  /// content may have been read from the page cache only). Otherwise the first write starts a
  /// new segment. Starts the committer thread.
  static absl::StatusOr<std::unique_ptr<CommitLog>> Open(FileSystem* fs, std::string dir,
                                                         const CommitLogOptions& options,
                                                         std::vector<SegmentInfo> segments,
                                                         uint64_t next_sequence,
                                                         FatalErrorHandler on_fatal);
  /// Close()s the log.
  ~CommitLog();
  CommitLog(const CommitLog&) = delete;
  CommitLog& operator=(const CommitLog&) = delete;

  /// Queues a record with `payload` (1 byte .. kMaxRecordPayload) and returns its sequence
  /// number; sequence numbers are consecutive. Never blocks on I/O. Fails after Close() or a
  /// fatal error.
  absl::StatusOr<uint64_t> Append(absl::string_view payload);

  /// What a waiter waits for.
  enum class Await {
    /// The record was handed to the operating system (survives a crash of the process).
    kWritten,
    /// The record was fsynced (survives a crash of the machine).
    kSynced,
  };
  /// Called once with OK and whether the record is synced, or with the fatal error.
  using Waiter = absl::AnyInvocable<void(absl::Status status, bool synced)>;
  /// Calls `waiter` once record `sequence` (already appended) is written or synced: at once on
  /// this thread if it already is, else later on the committer thread. Waiters must be quick and
  /// must not block on this log (no SyncAll or WaitSynced).
  void WhenDone(uint64_t sequence, Await await, Waiter waiter);

  /// Blocks until record `sequence` is synced (asking for an fsync if needed).
  absl::Status WaitSynced(uint64_t sequence);
  /// Blocks until every record appended before the call is synced.
  absl::Status SyncAll();
  /// Writes and fsyncs everything queued, stops the committer and closes the segment. Later
  /// appends fail. Returns the fatal error if there was one. Idempotent.
  absl::Status Close();

  /// The sequence of the last appended record (0 before the first).
  uint64_t last_sequence() const;
  /// Every record up to this sequence is fsynced.
  uint64_t synced_sequence() const;
  /// How long written records waited for the fsync that covered them: the wait of the oldest
  /// record of the latest fsync, and the longest such wait since Open. Under the periodic
  /// policy a record waits the sync interval plus the time the committer takes to finish the
  /// write in progress and the fsync itself, which the disk decides.
  struct SyncLag {
    std::chrono::microseconds last{0};
    std::chrono::microseconds max{0};
  };
  SyncLag sync_lag() const;
  /// More than max_backlog_bytes wait to be written: the disk does not keep up.
  bool backlogged() const;
  /// OK, or the fatal error.
  absl::Status status() const;
  /// The segments, oldest first (the last one is being appended to).
  std::vector<SegmentInfo> Segments() const;
  /// Bytes in all segments.
  uint64_t total_bytes() const;
  /// Bytes in all segments plus the appended records not written yet: what the segments will
  /// hold once the committer catches up. Bounds on the log's size use this, so that records
  /// queued while the committer lags count at once.
  uint64_t appended_bytes() const;
  /// Deletes the oldest segments while every record in them has a sequence below `sequence`;
  /// never the newest segment. Returns how many were deleted.
  absl::StatusOr<int> DeleteSegmentsBefore(uint64_t sequence);

 private:
  CommitLog(FileSystem* fs, std::string dir, const CommitLogOptions& options,
            std::vector<SegmentInfo> segments, uint64_t next_sequence, FatalErrorHandler on_fatal);

  void Run();
  // Writes `buffer`, whose first record is `first_sequence`, starting a new segment first when
  // the current one is full. Committer thread only.
  absl::Status Write(const std::string& buffer, uint64_t first_sequence);
  absl::Status StartSegment(uint64_t first_sequence);
  // Under mu_: records the fatal error and takes every waiter, to be failed outside the lock.
  void FailLocked(const absl::Status& status, std::vector<Waiter>* failed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  using Clock = std::chrono::steady_clock;

  FileSystem* const fs_;
  const std::string dir_;
  const CommitLogOptions options_;
  const FatalErrorHandler on_fatal_;

  // The segment being appended to: touched only by the committer thread once it runs (and by
  // Open/Close while it does not).
  std::unique_ptr<WritableFile> active_;

  // Guards the members below it; a pthread mutex (not absl::Mutex) because ThreadSanitizer
  // understands it and its condition variables.
  mutable Mutex mu_;
  CondVar work_cv_;  // the committer waits for work
  CondVar done_cv_;  // blocking callers wait for progress
  std::vector<SegmentInfo> segments_ ABSL_GUARDED_BY(mu_);
  // Framed records not yet taken by the committer.
  std::string pending_ ABSL_GUARDED_BY(mu_);
  // Bytes the committer took and is writing.
  uint64_t writing_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // The sequence of the first record in pending_.
  uint64_t pending_first_ ABSL_GUARDED_BY(mu_) = 0;
  // The sequence the next Append gets.
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_);
  // Every record up to here is written.
  uint64_t written_sequence_ ABSL_GUARDED_BY(mu_);
  // Every record up to here is fsynced.
  uint64_t synced_sequence_ ABSL_GUARDED_BY(mu_);
  // Someone waits for an fsync up to here.
  uint64_t sync_target_ ABSL_GUARDED_BY(mu_) = 0;
  // When written_ first passed synced_ (if it has).
  Clock::time_point unsynced_since_ ABSL_GUARDED_BY(mu_){};
  SyncLag sync_lag_ ABSL_GUARDED_BY(mu_);
  std::multimap<uint64_t, Waiter> written_waiters_ ABSL_GUARDED_BY(mu_);
  std::multimap<uint64_t, Waiter> synced_waiters_ ABSL_GUARDED_BY(mu_);
  // The fatal error, once there is one.
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::thread committer_;
};

}  // namespace collide
