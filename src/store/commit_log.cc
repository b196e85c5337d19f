#include "store/commit_log.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {
namespace {

// The most bytes of buffer the committer keeps from one round for the next one's queue.
constexpr size_t kKeptBufferBytes = 2 << 20;

}  // namespace

CommitLog::CommitLog(FileSystem* fs, std::string dir, const CommitLogOptions& options,
                     std::vector<SegmentInfo> segments, uint64_t next_sequence,
                     FatalErrorHandler on_fatal)
    : fs_(fs),
      dir_(std::move(dir)),
      options_(options),
      on_fatal_(std::move(on_fatal)),
      segments_(std::move(segments)),
      next_sequence_(next_sequence),
      // Everything recovery found is on disk (and the reused segment is fsynced in Open).
      written_sequence_(next_sequence - 1),
      synced_sequence_(next_sequence - 1) {}

absl::StatusOr<std::unique_ptr<CommitLog>> CommitLog::Open(FileSystem* fs, std::string dir,
                                                           const CommitLogOptions& options,
                                                           std::vector<SegmentInfo> segments,
                                                           uint64_t next_sequence,
                                                           FatalErrorHandler on_fatal) {
  if (options.segment_bytes == 0) {
    return absl::InvalidArgumentError("segment_bytes: must be > 0");
  }
  if (next_sequence == 0) return absl::InvalidArgumentError("next_sequence: must be >= 1");
  std::unique_ptr<CommitLog> log(new CommitLog(fs, std::move(dir), options, std::move(segments),
                                               next_sequence, std::move(on_fatal)));
  if (!log->segments_.empty()) {
    // Recovery guarantees that the last segment ends right before next_sequence (or is empty
    // and named after it), so new records continue it.
    const SegmentInfo& last = log->segments_.back();
    assert(last.bytes > 0 || last.first_sequence == next_sequence);
    const std::string path = JoinPath(log->dir_, last.name);
    absl::StatusOr<std::unique_ptr<WritableFile>> file = fs->OpenForAppend(path);
    if (!file.ok()) return file.status();
    if (absl::Status status = (*file)->Sync(); !status.ok()) return status;
    log->active_ = *std::move(file);
  }
  log->committer_ = std::thread(&CommitLog::Run, log.get());
  return log;
}

CommitLog::~CommitLog() { Close().IgnoreError(); }

absl::StatusOr<uint64_t> CommitLog::Append(absl::string_view payload) {
  if (payload.empty() || payload.size() > kMaxRecordPayload) {
    return absl::InvalidArgumentError(
        absl::StrCat("log record of ", payload.size(), " bytes: must be 1 to ", kMaxRecordPayload));
  }
  // The checksum of the bulk is computed before taking the lock.
  const uint32_t checksum = PayloadChecksum(payload);
  MutexLock lock(&mu_);
  if (!failed_.ok()) return failed_;
  if (closing_) return absl::FailedPreconditionError("the log is closed");
  const uint64_t sequence = next_sequence_++;
  if (pending_.empty()) pending_first_ = sequence;
  AppendRecord(sequence, payload, checksum, &pending_);
  work_cv_.NotifyOne();
  return sequence;
}

void CommitLog::WhenDone(uint64_t sequence, Await await, Waiter waiter) {
  std::unique_lock<Mutex> lock(mu_);
  assert(sequence < next_sequence_);
  if (!failed_.ok()) {
    absl::Status status = failed_;
    lock.unlock();
    waiter(status, false);
    return;
  }
  if (await == Await::kWritten) {
    if (sequence <= written_sequence_) {
      const bool synced = sequence <= synced_sequence_;
      lock.unlock();
      waiter(absl::OkStatus(), synced);
      return;
    }
    written_waiters_.emplace(sequence, std::move(waiter));
    return;
  }
  if (sequence <= synced_sequence_) {
    lock.unlock();
    waiter(absl::OkStatus(), true);
    return;
  }
  synced_waiters_.emplace(sequence, std::move(waiter));
  if (sequence > sync_target_) sync_target_ = sequence;
  work_cv_.NotifyOne();
}

absl::Status CommitLog::WaitSynced(uint64_t sequence) {
  std::unique_lock<Mutex> lock(mu_);
  // Nothing beyond the last appended record can be waited for.
  if (sequence >= next_sequence_) sequence = next_sequence_ - 1;
  if (sequence > sync_target_) {
    sync_target_ = sequence;
    work_cv_.NotifyOne();
  }
  done_cv_.Wait(lock, [&] { return synced_sequence_ >= sequence || !failed_.ok() || closed_; });
  if (!failed_.ok()) return failed_;
  if (synced_sequence_ < sequence) return absl::FailedPreconditionError("the log is closed");
  return absl::OkStatus();
}

absl::Status CommitLog::SyncAll() {
  uint64_t last;
  {
    MutexLock lock(&mu_);
    last = next_sequence_ - 1;
  }
  return WaitSynced(last);
}

absl::Status CommitLog::Close() {
  {
    MutexLock lock(&mu_);
    if (closed_) return failed_;
    closing_ = true;
    work_cv_.NotifyOne();
  }
  if (committer_.joinable()) committer_.join();
  MutexLock lock(&mu_);
  closed_ = true;
  absl::Status status = failed_;
  if (active_ != nullptr) {
    absl::Status closed = active_->Close();
    if (status.ok()) status = closed;
    active_.reset();
  }
  done_cv_.NotifyAll();
  return status;
}

void CommitLog::FailLocked(const absl::Status& status, std::vector<Waiter>* failed) {
  failed_ = status;
  for (auto& [sequence, waiter] : written_waiters_) failed->push_back(std::move(waiter));
  for (auto& [sequence, waiter] : synced_waiters_) failed->push_back(std::move(waiter));
  written_waiters_.clear();
  synced_waiters_.clear();
  pending_.clear();
  done_cv_.NotifyAll();
}

void CommitLog::Run() {
  const auto interval = options_.sync_interval;
  const bool periodic = interval.count() > 0;
  std::unique_lock<Mutex> lock(mu_);
  // What a round writes; kept for the next round's queue (below).
  std::string buffer;
  while (true) {
    // Wait until there is something to write, someone waits for an fsync, the sync interval
    // has passed with unsynced bytes, or the log closes.
    bool sync = false;
    while (true) {
      const bool unsynced = synced_sequence_ < written_sequence_;
      const bool interval_due = unsynced && periodic && Clock::now() - unsynced_since_ >= interval;
      sync = closing_ || sync_target_ > synced_sequence_ || interval_due;
      if (!pending_.empty() || (unsynced && sync)) break;
      if (closing_) return;  // everything written and synced
      if (unsynced && periodic) {
        work_cv_.WaitUntil(lock, unsynced_since_ + interval);
      } else {
        work_cv_.Wait(lock);
      }
    }
    // Take everything queued: one write and at most one fsync for all of it (group commit).
    // The queue gets the buffer written last round, emptied, so that appends fill memory
    // already in use instead of a fresh allocation every round (a tick loop's records are a few
    // hundred KB each); one larger than kKeptBufferBytes, a burst's, is freed.
    buffer.clear();
    if (buffer.capacity() > kKeptBufferBytes) std::string().swap(buffer);
    buffer.swap(pending_);
    writing_bytes_ = buffer.size();
    const uint64_t first = pending_first_;
    const uint64_t last = next_sequence_ - 1;
    // Records appended from here on wait for the next round; a sync now covers up to `last`,
    // which is at least every sync target set so far (targets never exceed appended records).
    lock.unlock();
    const Clock::time_point started = Clock::now();
    absl::Status status;
    if (!buffer.empty()) status = Write(buffer, first);
    if (status.ok() && sync && active_ != nullptr) {
      const Clock::time_point sync_started = Clock::now();
      status = active_->Sync();
      if (options_.histograms != nullptr) {
        options_.histograms->fsync_ns.Observe(static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sync_started)
                .count()));
      }
    }
    if (options_.histograms != nullptr && !buffer.empty()) {
      options_.histograms->group_commit_records.Observe(last - first + 1);
    }
    if (!status.ok()) {
      // The handler first, before anyone can observe the failure: by default it stops the
      // process, so no waiter hears anything.
      if (on_fatal_) on_fatal_(status);
      std::vector<Waiter> failed;
      lock.lock();
      FailLocked(status, &failed);
      lock.unlock();
      for (Waiter& waiter : failed) waiter(status, false);
      return;
    }
    lock.lock();
    writing_bytes_ = 0;
    if (!buffer.empty()) {
      if (synced_sequence_ == written_sequence_) unsynced_since_ = started;
      written_sequence_ = last;
      segments_.back().bytes = active_->Size();
    }
    if (sync) {
      if (synced_sequence_ < written_sequence_) {
        sync_lag_.last =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - unsynced_since_);
        sync_lag_.max = std::max(sync_lag_.max, sync_lag_.last);
      }
      synced_sequence_ = written_sequence_;
    }
    // Collect the waiters this round satisfied; call them without the lock.
    std::vector<std::pair<Waiter, bool>> ready;
    while (!written_waiters_.empty() && written_waiters_.begin()->first <= written_sequence_) {
      auto node = written_waiters_.extract(written_waiters_.begin());
      ready.emplace_back(std::move(node.mapped()), node.key() <= synced_sequence_);
    }
    while (!synced_waiters_.empty() && synced_waiters_.begin()->first <= synced_sequence_) {
      auto node = synced_waiters_.extract(synced_waiters_.begin());
      ready.emplace_back(std::move(node.mapped()), true);
    }
    done_cv_.NotifyAll();
    if (!ready.empty()) {
      lock.unlock();
      for (auto& [waiter, synced] : ready) waiter(absl::OkStatus(), synced);
      ready.clear();
      lock.lock();
    }
  }
}

absl::Status CommitLog::Write(const std::string& buffer, uint64_t first_sequence) {
  if (active_ == nullptr || active_->Size() >= options_.segment_bytes) {
    if (absl::Status status = StartSegment(first_sequence); !status.ok()) return status;
  }
  return active_->Append(buffer);
}

absl::Status CommitLog::StartSegment(uint64_t first_sequence) {
  if (active_ != nullptr) {
    // A closed segment is always complete on disk, so recovery may treat any damage in it as
    // corruption rather than a torn write.
    if (absl::Status status = active_->Sync(); !status.ok()) return status;
    if (absl::Status status = active_->Close(); !status.ok()) return status;
    active_.reset();
  }
  const std::string name = SegmentFileName(first_sequence);
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_->Create(JoinPath(dir_, name));
  if (!file.ok()) return file.status();
  // The new file's directory entry must be durable before any record in it is acknowledged.
  if (absl::Status status = fs_->SyncDir(dir_); !status.ok()) return status;
  active_ = *std::move(file);
  MutexLock lock(&mu_);
  segments_.push_back(SegmentInfo{.first_sequence = first_sequence, .name = name, .bytes = 0});
  return absl::OkStatus();
}

uint64_t CommitLog::last_sequence() const {
  MutexLock lock(&mu_);
  return next_sequence_ - 1;
}

uint64_t CommitLog::synced_sequence() const {
  MutexLock lock(&mu_);
  return synced_sequence_;
}

CommitLog::SyncLag CommitLog::sync_lag() const {
  MutexLock lock(&mu_);
  return sync_lag_;
}

bool CommitLog::backlogged() const {
  MutexLock lock(&mu_);
  return pending_.size() > options_.max_backlog_bytes;
}

absl::Status CommitLog::status() const {
  MutexLock lock(&mu_);
  return failed_;
}

std::vector<SegmentInfo> CommitLog::Segments() const {
  MutexLock lock(&mu_);
  return segments_;
}

uint64_t CommitLog::total_bytes() const {
  MutexLock lock(&mu_);
  uint64_t total = 0;
  for (const SegmentInfo& segment : segments_) total += segment.bytes;
  return total;
}

uint64_t CommitLog::appended_bytes() const {
  MutexLock lock(&mu_);
  uint64_t total = pending_.size() + writing_bytes_;
  for (const SegmentInfo& segment : segments_) total += segment.bytes;
  return total;
}

absl::StatusOr<int> CommitLog::DeleteSegmentsBefore(uint64_t sequence) {
  std::vector<std::string> doomed;
  {
    MutexLock lock(&mu_);
    // Segment 0 holds records [first0, first1): all below `sequence` when first1 <= sequence.
    size_t n = 0;
    while (n + 1 < segments_.size() && segments_[n + 1].first_sequence <= sequence) ++n;
    for (size_t i = 0; i < n; ++i) doomed.push_back(segments_[i].name);
    segments_.erase(segments_.begin(), segments_.begin() + static_cast<ptrdiff_t>(n));
  }
  for (const std::string& name : doomed) {
    absl::Status status = fs_->Delete(JoinPath(dir_, name));
    if (!status.ok() && !absl::IsNotFound(status)) return status;
  }
  return static_cast<int>(doomed.size());
}

}  // namespace collide
