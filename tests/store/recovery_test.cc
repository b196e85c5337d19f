// Recovery under the in-process fault-injecting file system: crashes that drop unsynced bytes or
// tear the last write, bit flips in the middle and at the tail of the log, failing fsyncs and a
// full disk. Every recovered state is compared with a replay of the same batch stream.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/batch_stream.h"
#include "store/database.h"
#include "store/fault_file_system.h"
#include "store/record_format.h"
#include "store/store_files.h"
#include "store/store_testing.h"

namespace collide {
namespace {

using std::chrono::milliseconds;

constexpr char kDir[] = "/data";

// Records fatal log errors instead of stopping the process.
struct FatalRecorder {
  std::mutex mu;
  std::vector<absl::Status> errors;
  FatalErrorHandler Handler() {
    return [this](const absl::Status& status) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(status);
    };
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return errors.size();
  }
};

DatabaseOptions Options(FaultFileSystem* fs, FatalRecorder* fatal,
                        DurabilityPolicy policy = DurabilityPolicy::kAlways) {
  DatabaseOptions options = CrashTestOptions(policy);
  options.file_system = fs;
  options.on_fatal_error = fatal->Handler();
  return options;
}

std::unique_ptr<Database> MustOpen(const DatabaseOptions& options) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(kDir, options);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

// The state the crash test's scene has after batches 1..n of `seed`.
SceneState Replay(uint64_t seed, uint64_t n) {
  Scene scene(kCrashScene, SceneOptions{});
  BatchStream stream(seed);
  for (uint64_t k = 1; k <= n; ++k) {
    absl::StatusOr<ApplyResult> r = scene.Apply(stream.Next(), ClientTag{kCrashClient, k});
    EXPECT_TRUE(r.ok()) << r.status();
  }
  return scene.CaptureState();
}

// The last client sequence the recovered scene applied, and its state.
uint64_t RecoveredSequence(const Database& db, SceneState* state) {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = db.GetScene(kCrashScene);
  if (!scene.ok()) return 0;
  *state = (*scene)->CaptureState();
  std::optional<ClientMark> mark = (*scene)->GetClientMark(kCrashClient);
  return mark.has_value() ? mark->sequence : 0;
}

// Applies batches from..to of `stream` (which must be at from - 1) and waits for each ack.
void ApplyRange(Database& db, BatchStream& stream, uint64_t from, uint64_t to) {
  for (uint64_t k = from; k <= to; ++k) {
    absl::StatusOr<ApplyAck> ack =
        db.ApplyAndWait(kCrashScene, ClientTag{kCrashClient, k}, stream.Next());
    ASSERT_TRUE(ack.ok()) << ack.status();
    ASSERT_EQ(ack->version, k);
  }
}

TEST(Recovery, ACrashDropsUnsyncedBytesButNothingSynced) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  // `periodic` acknowledges after the write; without periodic fsyncs nothing is synced until
  // Flush.
  DatabaseOptions options = Options(&fs, &fatal, DurabilityPolicy::kPeriodic);
  options.sync_interval = milliseconds(0);
  options.snapshot_min_log_bytes = 1 << 30;  // a snapshot would fsync the log first
  options.max_log_bytes = 1 << 30;
  auto db = MustOpen(options);
  ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
  BatchStream stream(1);
  ApplyRange(*db, stream, 1, 10);
  ASSERT_TRUE(db->Flush().ok());
  ApplyRange(*db, stream, 11, 20);

  // A machine crash keeps the 10 synced batches; a process crash keeps all 20.
  std::unique_ptr<FaultFileSystem> machine = fs.CrashImage(), process = fs.Clone();
  for (auto [image, expected] : {std::pair{machine.get(), 10}, std::pair{process.get(), 20}}) {
    DatabaseOptions reopened = options;
    reopened.file_system = image;
    auto recovered = MustOpen(reopened);
    SceneState state;
    EXPECT_EQ(RecoveredSequence(*recovered, &state), static_cast<uint64_t>(expected));
    EXPECT_TRUE(SameState(state, Replay(1, expected)));
  }
}

TEST(FaultFileSystem, AnArmedCrashIsTakenRightAfterTheChosenSyncOfAFileOrADirectory) {
  for (int step = 0; step <= 4; ++step) {
    SCOPED_TRACE(step);
    FaultFileSystem fs;
    ASSERT_TRUE(fs.CreateDir("d").ok());
    fs.CrashAfterSyncs(step);
    absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.Create("d/f");
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append("one").ok());
    ASSERT_TRUE((*file)->Sync().ok());  // sync 1: the bytes, not yet the name
    ASSERT_TRUE(fs.SyncDir("d").ok());  // sync 2: the name
    ASSERT_TRUE((*file)->Append("two").ok());
    fs.FailSyncs(1);
    EXPECT_FALSE((*file)->Sync().ok());  // a failed sync does not count
    ASSERT_TRUE((*file)->Sync().ok());   // sync 3
    std::unique_ptr<FaultFileSystem> image = fs.TakeArmedCrashImage();
    if (step == 4) {
      EXPECT_EQ(image, nullptr);
      continue;
    }
    ASSERT_NE(image, nullptr);
    EXPECT_EQ(fs.TakeArmedCrashImage(), nullptr);  // handed over once
    const std::string expected = step < 2 ? "" : step == 2 ? "one" : "onetwo";
    EXPECT_EQ(image->Contents("d/f"), expected);
    EXPECT_EQ(image->ReadFile("d/f").ok(), step >= 2);
  }
}

TEST(Recovery, ATornLastWriteIsCutAndReported) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  DatabaseOptions options = Options(&fs, &fatal, DurabilityPolicy::kPeriodic);
  options.sync_interval = milliseconds(0);
  options.segment_bytes = 1 << 20;  // one segment, no snapshots
  options.snapshot_min_log_bytes = 1 << 30;
  options.max_log_bytes = 1 << 30;
  auto db = MustOpen(options);
  ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
  BatchStream stream(2);
  ApplyRange(*db, stream, 1, 5);
  ASSERT_TRUE(db->Flush().ok());
  const uint64_t synced_bytes = fs.TotalBytes();
  ApplyRange(*db, stream, 6, 12);
  const uint64_t unsynced = fs.TotalBytes() - synced_bytes;
  int torn = 0;
  for (uint64_t keep = 0; keep <= unsynced; keep += 5) {
    std::unique_ptr<FaultFileSystem> image = fs.CrashImage(CrashOptions{.torn_tail_bytes = keep});
    DatabaseOptions reopened = options;
    reopened.file_system = image.get();
    auto recovered = MustOpen(reopened);
    ASSERT_NE(recovered, nullptr);
    SceneState state;
    const uint64_t n = RecoveredSequence(*recovered, &state);
    EXPECT_GE(n, 5u);
    EXPECT_LE(n, 12u);
    EXPECT_TRUE(SameState(state, Replay(2, n))) << "kept " << keep << " unsynced bytes";
    const RecoveryReport& report = recovered->recovery_report();
    if (report.torn_tail.has_value()) {
      ++torn;
      EXPECT_EQ(report.torn_tail->file, JoinPath(kDir, SegmentFileName(1)));
      EXPECT_GT(report.torn_tail->bytes_cut, 0u);
      EXPECT_EQ(report.torn_tail->offset + report.torn_tail->bytes_cut, synced_bytes + keep)
          << "the cut reaches the end of what survived";
    }
    // After the cut the database takes new batches where the log ends.
    BatchStream again(2);
    for (uint64_t k = 1; k <= n; ++k) again.Next();
    absl::StatusOr<ApplyAck> ack =
        recovered->ApplyAndWait(kCrashScene, ClientTag{kCrashClient, n + 1}, again.Next());
    ASSERT_TRUE(ack.ok()) << ack.status();
    EXPECT_EQ(ack->version, n + 1);
  }
  EXPECT_GT(torn, 10);
}

// Closes a database after `batches` acknowledged batches in one segment and returns the offset
// of each record in that segment.
std::vector<uint64_t> WriteOneSegment(FaultFileSystem* fs, FatalRecorder* fatal, int batches) {
  DatabaseOptions options = Options(fs, fatal);
  options.segment_bytes = 1 << 20;  // one segment, no snapshots
  options.snapshot_min_log_bytes = 1 << 30;
  options.max_log_bytes = 1 << 30;
  auto db = MustOpen(options);
  EXPECT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
  BatchStream stream(3);
  ApplyRange(*db, stream, 1, batches);
  EXPECT_TRUE(db->Close().ok());
  SegmentScan scan = ScanSegment(fs->Contents(JoinPath(kDir, SegmentFileName(1))), 1);
  EXPECT_EQ(scan.end, SegmentEnd::kClean);
  std::vector<uint64_t> offsets;
  for (const RecordView& r : scan.records) offsets.push_back(r.offset);
  return offsets;
}

TEST(Recovery, ABitFlipInTheMiddleRefusesToStartNamingFileAndOffset) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  std::vector<uint64_t> offsets = WriteOneSegment(&fs, &fatal, 20);
  ASSERT_EQ(offsets.size(), 21u);  // the scene's creation and 20 batches
  const std::string path = JoinPath(kDir, SegmentFileName(1));
  for (uint64_t at : {offsets[8] + 20, offsets[3] + 1 /* the length */, offsets[15] + 9}) {
    std::unique_ptr<FaultFileSystem> copy = fs.Clone();
    ASSERT_TRUE(copy->FlipBit(path, at, 3).ok());
    DatabaseOptions options = Options(copy.get(), &fatal);
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(kDir, options);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss);
    const uint64_t record_start = *std::prev(std::upper_bound(offsets.begin(), offsets.end(), at));
    EXPECT_NE(db.status().message().find(absl::StrCat(path, " at offset ", record_start, ":")),
              absl::string_view::npos)
        << db.status();
    // Nothing was changed: the file still holds every byte.
    EXPECT_EQ(copy->Contents(path).size(), fs.Contents(path).size());
  }
}

TEST(Recovery, ABitFlipInTheLastRecordIsCutAsATornTail) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  std::vector<uint64_t> offsets = WriteOneSegment(&fs, &fatal, 20);
  const std::string path = JoinPath(kDir, SegmentFileName(1));
  ASSERT_TRUE(fs.FlipBit(path, offsets.back() + 30, 0).ok());
  DatabaseOptions options = Options(&fs, &fatal);
  auto db = MustOpen(options);
  ASSERT_NE(db, nullptr);
  const RecoveryReport& report = db->recovery_report();
  ASSERT_TRUE(report.torn_tail.has_value());
  EXPECT_EQ(report.torn_tail->offset, offsets.back());
  EXPECT_EQ(report.torn_tail->problem, "record checksum mismatch");
  SceneState state;
  EXPECT_EQ(RecoveredSequence(*db, &state), 19u);
  EXPECT_TRUE(SameState(state, Replay(3, 19)));
  EXPECT_EQ(fs.Contents(path).size(), offsets.back());
}

TEST(Recovery, DamageInAClosedSegmentRefusesToStart) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  {
    DatabaseOptions options = Options(&fs, &fatal);
    options.snapshot_min_log_bytes = 1 << 30;  // keep every segment
    options.max_log_bytes = 1 << 30;
    auto db = MustOpen(options);
    ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
    BatchStream stream(4);
    ApplyRange(*db, stream, 1, 200);
    ASSERT_GT(db->stats().segments, 2);
  }
  const std::string path = JoinPath(kDir, SegmentFileName(1));
  const uint64_t size = fs.Contents(path).size();
  ASSERT_TRUE(fs.FlipBit(path, size - 3, 5).ok());  // the last record of a closed segment
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(kDir, Options(&fs, &fatal));
  EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(db.status().message().find(path), absl::string_view::npos) << db.status();
}

TEST(Recovery, AFailedFsyncStopsAcknowledgingAndLosesNothingAcknowledged) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  auto db = MustOpen(Options(&fs, &fatal));
  ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
  BatchStream stream(5);
  ApplyRange(*db, stream, 1, 10);
  fs.FailSyncs(1);
  absl::StatusOr<ApplyAck> failed =
      db->ApplyAndWait(kCrashScene, ClientTag{kCrashClient, 11}, stream.Next());
  // The log's own error (INTERNAL) stays the store's; the writer is told what it means.
  EXPECT_EQ(fatal.count(), 1u);
  EXPECT_EQ(fatal.errors[0].code(), absl::StatusCode::kInternal);
  EXPECT_EQ(db->write_status().code(), absl::StatusCode::kInternal);
  const std::string refused =
      "data_dir: the server's log could not be written (I/O error): writes are refused until it "
      "restarts; queries are still served";
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(failed.status().message(), refused);
  // Nothing more is accepted, let alone acknowledged.
  absl::StatusOr<ApplyAck> later =
      db->ApplyAndWait(kCrashScene, ClientTag{kCrashClient, 12}, stream.Next());
  EXPECT_EQ(later.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(later.status().message(), refused);
  EXPECT_FALSE(db->Flush().ok());
  // Nor a creation or a deletion: neither changes the scene index.
  const absl::Status create = db->CreateScene("other", SceneOptions{});
  EXPECT_EQ(create.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(create.message(), refused);
  EXPECT_EQ(db->scene_count(), 1u);
  const absl::Status remove = db->DeleteScene(kCrashScene);
  EXPECT_EQ(remove.code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(db->GetScene(kCrashScene).ok());
  EXPECT_FALSE((*db->GetScene(kCrashScene))->deleted());
  std::unique_ptr<FaultFileSystem> image = fs.CrashImage();
  DatabaseOptions reopened = Options(image.get(), &fatal);
  auto recovered = MustOpen(reopened);
  SceneState state;
  const uint64_t n = RecoveredSequence(*recovered, &state);
  EXPECT_GE(n, 10u);
  EXPECT_TRUE(SameState(state, Replay(5, n)));
}

TEST(Recovery, AFullDiskStopsAcknowledging) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  auto db = MustOpen(Options(&fs, &fatal));
  ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
  BatchStream stream(6);
  ApplyRange(*db, stream, 1, 10);
  fs.SetSpaceLimit(fs.TotalBytes() + 100);
  uint64_t acked = 10;
  absl::Status refused;
  for (uint64_t k = 11; k <= 30; ++k) {
    absl::StatusOr<ApplyAck> ack =
        db->ApplyAndWait(kCrashScene, ClientTag{kCrashClient, k}, stream.Next());
    if (!ack.ok()) {
      refused = ack.status();
      break;
    }
    acked = k;
  }
  EXPECT_EQ(fatal.count(), 1u);
  EXPECT_EQ(fatal.errors[0].code(), absl::StatusCode::kResourceExhausted);
  // The writer is told the disk is full, not the log file's path.
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(),
            "data_dir: the server's disk is full (or its file size limit was reached): writes are "
            "refused until it restarts with space; queries are still served");
  std::unique_ptr<FaultFileSystem> image = fs.CrashImage();
  auto recovered = MustOpen(Options(image.get(), &fatal));
  SceneState state;
  const uint64_t n = RecoveredSequence(*recovered, &state);
  EXPECT_GE(n, acked);
  EXPECT_TRUE(SameState(state, Replay(6, n)));
}

TEST(Recovery, RandomCrashesAlwaysRecoverAReplayOfEveryAcknowledgedBatch) {
  const uint64_t seed = 77;
  std::mt19937_64 rng(seed);
  FatalRecorder fatal;
  auto fs = std::make_unique<FaultFileSystem>();
  uint64_t acked = 0;
  uint64_t snapshots = 0, torn = 0;
  constexpr int kCrashes = 120;
  for (int crash = 0; crash < kCrashes; ++crash) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " crash " << crash);
    auto db = MustOpen(Options(fs.get(), &fatal));
    ASSERT_NE(db, nullptr);
    torn += db->recovery_report().torn_tail.has_value();
    SceneState state;
    const uint64_t n = RecoveredSequence(*db, &state);
    ASSERT_GE(n, acked);
    ASSERT_TRUE(SameState(state, Replay(seed, n)));
    if (crash == 0) {
      ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
    }
    BatchStream stream(seed);
    for (uint64_t k = 1; k <= n; ++k) stream.Next();
    // Acknowledged batches, then some in flight that the crash may or may not keep.
    const uint64_t count = 1 + rng() % 40;
    ApplyRange(*db, stream, n + 1, n + count);
    acked = n + count;
    for (uint64_t k = acked + 1; k <= acked + rng() % 5; ++k) {
      db->Apply(kCrashScene, ClientTag{kCrashClient, k}, stream.Next(),
                [](absl::StatusOr<ApplyAck>) {});
    }
    if (rng() % 4 == 0) std::this_thread::sleep_for(milliseconds(rng() % 10));
    std::unique_ptr<FaultFileSystem> image =
        fs->CrashImage(CrashOptions{.torn_tail_bytes = rng() % 3000});
    snapshots += db->stats().snapshots_written;
    db.reset();  // the crashed process; it wrote into the old file system
    fs = std::move(image);
  }
  EXPECT_EQ(fatal.count(), 0u);
  std::printf(
      "%d simulated crashes: %llu batches acknowledged and kept, %llu snapshots, %llu torn "
      "tails cut\n",
      kCrashes, static_cast<unsigned long long>(acked), static_cast<unsigned long long>(snapshots),
      static_cast<unsigned long long>(torn));
  EXPECT_GT(snapshots, 0u);
}

TEST(Recovery, PeriodicLosesOnlyWhatNoFsyncCoveredAndFsyncsOnItsOwn) {
  // `periodic` acknowledges after the write and fsyncs on its own at least every interval. Two
  // properties, each asserted by order rather than by the clock (a committer thread descheduled
  // on a loaded machine may be late by any amount, and nothing may be lost because of that):
  //   - a machine crash (unsynced bytes dropped) keeps every acknowledged batch whose log record
  //     the store had reported fsynced (StoreStats::synced_sequence) before the crash;
  //   - with no Flush and no waiter, the fsync still comes: once it has, a crash loses nothing.
  // How old the lost acknowledgements were is printed, not asserted.
  const milliseconds interval(20);
  const uint64_t seed = 9;
  std::mt19937_64 rng(seed);
  uint64_t total_lost = 0, max_lost = 0, covered = 0;
  milliseconds oldest_lost(0);
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " round " << round);
    FaultFileSystem fs;
    FatalRecorder fatal;
    DatabaseOptions options = Options(&fs, &fatal, DurabilityPolicy::kPeriodic);
    options.sync_interval = interval;
    auto db = MustOpen(options);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
    using Clock = std::chrono::steady_clock;
    struct Ack {
      uint64_t k;
      // The log's last sequence read after the ack: at or after the batch's own record.
      uint64_t logged_through;
      Clock::time_point when;
    };
    std::mutex mu;
    std::vector<Ack> acks;
    std::atomic<bool> stop{false};
    std::atomic<bool> writer_failed{false};
    std::thread writer([&] {
      BatchStream stream(seed);
      for (uint64_t k = 1; !stop; ++k) {
        absl::StatusOr<ApplyAck> ack =
            db->ApplyAndWait(kCrashScene, ClientTag{kCrashClient, k}, stream.Next());
        if (!ack.ok()) {
          writer_failed = true;
          return;
        }
        const uint64_t logged_through = db->stats().last_sequence;
        std::lock_guard<std::mutex> lock(mu);
        acks.push_back(Ack{k, logged_through, Clock::now()});
      }
    });
    std::this_thread::sleep_for(milliseconds(30 + rng() % 100));
    // So that every round checks the first property: wait until a reported fsync covers at
    // least one acknowledgement (the writer goes on meanwhile).
    const auto covered_by = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < covered_by) {
      uint64_t first_logged = UINT64_MAX;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!acks.empty()) first_logged = acks.front().logged_through;
      }
      if (first_logged <= db->stats().synced_sequence) break;
      std::this_thread::sleep_for(milliseconds(1));
    }
    std::unique_ptr<FaultFileSystem> image;
    uint64_t synced = 0;
    Clock::time_point crash_time;
    std::vector<Ack> acked;
    {
      std::lock_guard<std::mutex> lock(mu);  // no ack is recorded while the image is taken
      synced = db->stats().synced_sequence;  // read before the image: covered by it
      image = fs.CrashImage();
      crash_time = Clock::now();
      acked = acks;
    }
    stop = true;
    writer.join();
    ASSERT_FALSE(writer_failed);
    {
      DatabaseOptions reopened = options;
      reopened.file_system = image.get();
      auto recovered = MustOpen(reopened);
      ASSERT_NE(recovered, nullptr);
      SceneState state;
      const uint64_t n = RecoveredSequence(*recovered, &state);
      EXPECT_TRUE(SameState(state, Replay(seed, n)));
      uint64_t lost = 0;
      for (const Ack& ack : acked) {
        if (ack.logged_through <= synced) {
          ++covered;
          EXPECT_LE(ack.k, n) << "batch " << ack.k << " was lost though the log had reported "
                              << "its record (at most " << ack.logged_through
                              << ") fsynced (through " << synced << ") before the crash";
        }
        if (ack.k <= n) continue;
        ++lost;
        oldest_lost =
            std::max(oldest_lost, std::chrono::duration_cast<milliseconds>(crash_time - ack.when));
      }
      total_lost += lost;
      max_lost = std::max(max_lost, lost);
    }

    // Nobody flushes or waits for an fsync from here on; the periodic one must still come.
    const uint64_t last = db->stats().last_sequence;
    const auto give_up = Clock::now() + std::chrono::seconds(60);
    while (db->stats().synced_sequence < last && Clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    ASSERT_GE(db->stats().synced_sequence, last) << "no periodic fsync within 60 s";
    std::unique_ptr<FaultFileSystem> settled = fs.CrashImage();
    DatabaseOptions reopened = options;
    reopened.file_system = settled.get();
    auto recovered = MustOpen(reopened);
    ASSERT_NE(recovered, nullptr);
    SceneState state;
    const uint64_t n = RecoveredSequence(*recovered, &state);
    ASSERT_FALSE(acks.empty());
    EXPECT_EQ(n, acks.back().k) << "a crash after the periodic fsync lost acknowledged batches";
    EXPECT_TRUE(SameState(state, Replay(seed, n)));
    EXPECT_EQ(fatal.count(), 0u);
  }
  std::printf(
      "periodic (20 ms): %llu acknowledged batches lost over 8 machine crashes (at most %llu in "
      "one, acknowledged at most %lld ms before the crash); %llu acknowledgements covered by a "
      "reported fsync, none lost\n",
      static_cast<unsigned long long>(total_lost), static_cast<unsigned long long>(max_lost),
      static_cast<long long>(oldest_lost.count()), static_cast<unsigned long long>(covered));
  EXPECT_GE(covered, 8u) << "a round had no acknowledgement covered by a reported fsync";
}

TEST(Recovery, DeletedScenesStayDeletedAndRecreatedOnesKeepOnlyTheirOwnState) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  auto db = MustOpen(Options(&fs, &fatal));
  ASSERT_TRUE(db->CreateScene("gone", SceneOptions{}).ok());
  ASSERT_TRUE(db->CreateScene("again", SceneOptions{}).ok());
  BatchStream a(10), b(11);
  for (uint64_t k = 1; k <= 50; ++k) {
    ASSERT_TRUE(db->ApplyAndWait("gone", ClientTag{}, a.Next()).ok());
    ASSERT_TRUE(db->ApplyAndWait("again", ClientTag{}, b.Next()).ok());
  }
  ASSERT_TRUE(db->Checkpoint().ok());  // both have snapshots now
  ASSERT_TRUE(db->DeleteScene("gone").ok());
  ASSERT_TRUE(db->DeleteScene("again").ok());
  ASSERT_TRUE(db->CreateScene("again", SceneOptions{.max_bodies = 5}).ok());
  UpdateBatch one{{UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}})}};
  ASSERT_TRUE(db->ApplyAndWait("again", ClientTag{}, one).ok());
  // Crash before and after the maintenance pass that removes the old snapshot files.
  std::unique_ptr<FaultFileSystem> early = fs.CrashImage();
  ASSERT_TRUE(db->Checkpoint().ok());
  std::unique_ptr<FaultFileSystem> late = fs.CrashImage();
  for (FaultFileSystem* image : {early.get(), late.get()}) {
    auto recovered = MustOpen(Options(image, &fatal));
    EXPECT_EQ(recovered->SceneNames(), std::vector<std::string>{"again"});
    absl::StatusOr<std::shared_ptr<const Scene>> again = recovered->GetScene("again");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->options().max_bodies, 5u);
    EXPECT_EQ((*again)->version(), 1u);
    EXPECT_EQ((*again)->Stats().body_count, 1);
    ASSERT_TRUE(recovered->Close().ok());
    // No snapshot of the old incarnations is left behind.
    const std::vector<std::string> names = *image->ListDir(kDir);
    for (const std::string& name : names) {
      std::string scene;
      uint64_t seq;
      if (ParseSnapshotFileName(name, &scene, &seq)) {
        EXPECT_EQ(scene, "again") << name;
      }
    }
  }
}

TEST(Recovery, ADuplicateStaysADuplicateAcrossRestarts) {
  FaultFileSystem fs;
  FatalRecorder fatal;
  UpdateBatch batch{{UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}})}};
  {
    auto db = MustOpen(Options(&fs, &fatal));
    ASSERT_TRUE(db->CreateScene(kCrashScene, SceneOptions{}).ok());
    absl::StatusOr<ApplyAck> ack = db->ApplyAndWait(kCrashScene, ClientTag{4, 9}, batch);
    ASSERT_TRUE(ack.ok());
    EXPECT_FALSE(ack->duplicate);
  }
  for (int restart = 0; restart < 2; ++restart) {
    auto db = MustOpen(Options(&fs, &fatal));
    absl::StatusOr<ApplyAck> again = db->ApplyAndWait(kCrashScene, ClientTag{4, 9}, batch);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->duplicate);
    EXPECT_TRUE(again->durable);
    EXPECT_EQ(again->version, 1u);
    if (restart == 0) {  // the mark survives in a snapshot too
      ASSERT_TRUE(db->Checkpoint().ok());
    }
  }
}

}  // namespace
}  // namespace collide
