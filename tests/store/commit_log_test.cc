#include "store/commit_log.h"

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "store/fault_file_system.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {
namespace {

using std::chrono::milliseconds;

constexpr char kDir[] = "/data";

struct Fixture {
  Fixture() { EXPECT_TRUE(fs.CreateDir(kDir).ok()); }
  std::unique_ptr<CommitLog> Open(CommitLogOptions options = {},
                                  std::vector<SegmentInfo> segments = {},
                                  uint64_t next_sequence = 1) {
    absl::StatusOr<std::unique_ptr<CommitLog>> log = CommitLog::Open(
        &fs, kDir, options, std::move(segments), next_sequence, [this](const absl::Status& status) {
          ++fatal_calls;
          fatal = status;
        });
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? *std::move(log) : nullptr;
  }
  // Every record of every segment, in order.
  std::vector<std::string> ReadAll(const std::vector<SegmentInfo>& segments) {
    std::vector<std::string> payloads;
    for (const SegmentInfo& segment : segments) {
      const std::string data = fs.Contents(JoinPath(kDir, segment.name));
      SegmentScan scan = ScanSegment(data, segment.first_sequence);
      EXPECT_EQ(scan.end, SegmentEnd::kClean) << segment.name;
      for (const RecordView& r : scan.records) payloads.emplace_back(r.payload);
    }
    return payloads;
  }

  FaultFileSystem fs;
  std::atomic<int> fatal_calls{0};
  absl::Status fatal;
};

TEST(CommitLog, AppendsConsecutiveSequencesAndRotatesSegments) {
  Fixture f;
  auto log = f.Open(CommitLogOptions{.segment_bytes = 1000});
  for (int i = 1; i <= 100; ++i) {
    absl::StatusOr<uint64_t> seq = log->Append(std::string(50, static_cast<char>(i)));
    ASSERT_TRUE(seq.ok());
    EXPECT_EQ(*seq, static_cast<uint64_t>(i));
    if (i % 10 == 0) {  // several write rounds
      ASSERT_TRUE(log->SyncAll().ok());
    }
  }
  ASSERT_TRUE(log->SyncAll().ok());
  EXPECT_EQ(log->synced_sequence(), 100u);
  const std::vector<SegmentInfo> segments = log->Segments();
  EXPECT_GT(segments.size(), 3u);
  EXPECT_EQ(segments.front().name, SegmentFileName(1));
  std::vector<std::string> payloads = f.ReadAll(segments);
  ASSERT_EQ(payloads.size(), 100u);
  for (int i = 1; i <= 100; ++i) EXPECT_EQ(payloads[i - 1], std::string(50, static_cast<char>(i)));
  ASSERT_TRUE(log->Close().ok());
  EXPECT_FALSE(log->Append("late").ok());
}

TEST(CommitLog, OneFsyncCoversEveryRecordThatArrivedMeanwhile) {
  Fixture f;
  // No periodic fsync: only waiters ask for one.
  auto log = f.Open(CommitLogOptions{.sync_interval = milliseconds(0)});
  const int syncs_before = f.fs.sync_count();
  uint64_t last = 0;
  for (int i = 0; i < 500; ++i) last = *log->Append("payload");
  std::atomic<int> acked{0};
  for (uint64_t seq = 1; seq <= last; ++seq) {
    log->WhenDone(seq, CommitLog::Await::kSynced, [&](absl::Status status, bool synced) {
      EXPECT_TRUE(status.ok());
      EXPECT_TRUE(synced);
      ++acked;
    });
  }
  ASSERT_TRUE(log->WaitSynced(last).ok());
  // The committer publishes the synced sequence before it calls the waiters (outside its lock),
  // so WaitSynced may return while the last callbacks are still running.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (acked.load() < 500 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_EQ(acked.load(), 500);
  // The first waiter may trigger an fsync of what was written by then; everything after it is
  // covered by at most one more.
  EXPECT_LE(f.fs.sync_count() - syncs_before, 2);
}

TEST(CommitLog, GroupCommitUnderConcurrentWriters) {
  Fixture f;
  auto log = f.Open(CommitLogOptions{.sync_interval = milliseconds(0)});
  constexpr int kThreads = 8, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        uint64_t seq = *log->Append(std::string(100, 'x'));
        std::promise<void> done;
        log->WhenDone(seq, CommitLog::Await::kSynced,
                      [&done](absl::Status, bool) { done.set_value(); });
        done.get_future().wait();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(log->synced_sequence(), static_cast<uint64_t>(kThreads * kEach));
  // Each thread waits for its own fsync, so without grouping there would be 1,600.
  EXPECT_LT(f.fs.sync_count(), kThreads * kEach);
  std::printf("group commit: %d fsyncs for %d acknowledged records\n", f.fs.sync_count(),
              kThreads * kEach);
}

TEST(CommitLog, WrittenWaitersDoNotForceAnFsync) {
  Fixture f;
  auto log = f.Open(CommitLogOptions{.sync_interval = milliseconds(0)});
  const uint64_t seq = *log->Append("a");
  std::promise<bool> synced;
  log->WhenDone(seq, CommitLog::Await::kWritten,
                [&](absl::Status status, bool s) { synced.set_value(s); });
  EXPECT_FALSE(synced.get_future().get());
  EXPECT_EQ(log->synced_sequence(), 0u);
  EXPECT_EQ(f.fs.Contents(JoinPath(kDir, SegmentFileName(1))).size(), kRecordHeaderBytes + 1);
}

TEST(CommitLog, PeriodicFsyncHappensWithoutAWaiter) {
  Fixture f;
  auto log = f.Open(CommitLogOptions{.sync_interval = milliseconds(20)});
  const uint64_t seq = *log->Append("a");
  // Nobody waits for the fsync: the committer must do it on its own. The bound is 500 times the
  // interval, so that a committer descheduled for seconds on a loaded machine (sanitizers,
  // ctest -j) still passes, while an interval read in the wrong unit (20 s) does not.
  const auto start = std::chrono::steady_clock::now();
  while (log->synced_sequence() < seq &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_EQ(log->synced_sequence(), seq) << "no periodic fsync within 10 s";
}

TEST(CommitLog, FailedFsyncIsFatalAndNothingIsAcknowledged) {
  Fixture f;
  auto log = f.Open(CommitLogOptions{.sync_interval = milliseconds(0)});
  ASSERT_TRUE(log->SyncAll().ok());
  f.fs.FailSyncs(1);
  const uint64_t seq = *log->Append("doomed");
  std::promise<absl::Status> outcome;
  log->WhenDone(seq, CommitLog::Await::kSynced,
                [&](absl::Status status, bool) { outcome.set_value(std::move(status)); });
  absl::Status status = outcome.get_future().get();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(f.fatal_calls.load(), 1);
  EXPECT_EQ(f.fatal, status);
  EXPECT_EQ(log->Append("after").status(), status);
  EXPECT_EQ(log->SyncAll(), status);
  EXPECT_EQ(log->Close(), status);
  // Waiters registered after the failure hear about it too.
  bool told = false;
  log->WhenDone(seq, CommitLog::Await::kWritten, [&](absl::Status s, bool) { told = !s.ok(); });
  EXPECT_TRUE(told);
}

TEST(CommitLog, FullDiskIsFatal) {
  Fixture f;
  auto log = f.Open();
  f.fs.SetSpaceLimit(100);
  const uint64_t seq = *log->Append(std::string(500, 'x'));
  EXPECT_EQ(log->WaitSynced(seq).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(f.fatal_calls.load(), 1);
}

TEST(CommitLog, ReopensAndContinuesTheLastSegment) {
  Fixture f;
  {
    auto log = f.Open();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->Append("first").ok());
    ASSERT_TRUE(log->Close().ok());
  }
  const std::string name = SegmentFileName(1);
  const uint64_t size = *f.fs.FileSize(JoinPath(kDir, name));
  auto log = f.Open(CommitLogOptions{},
                    {SegmentInfo{.first_sequence = 1, .name = name, .bytes = size}}, 6);
  EXPECT_EQ(*log->Append("second"), 6u);
  ASSERT_TRUE(log->SyncAll().ok());
  ASSERT_EQ(log->Segments().size(), 1u);
  EXPECT_EQ(f.ReadAll(log->Segments()).size(), 6u);
}

TEST(CommitLog, DeletesOnlyWhollyOlderSegmentsAndNeverTheNewest) {
  Fixture f;
  auto log = f.Open(CommitLogOptions{.segment_bytes = 50});
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(log->Append(std::string(60, 'x')).ok());
    ASSERT_TRUE(log->SyncAll().ok());  // one record per write round, so one per segment
  }
  std::vector<SegmentInfo> segments = log->Segments();
  ASSERT_EQ(segments.size(), 20u);
  EXPECT_EQ(*log->DeleteSegmentsBefore(5), 4);  // records 1..4
  EXPECT_EQ(log->Segments().front().first_sequence, 5u);
  EXPECT_FALSE(f.fs.FileSize(JoinPath(kDir, SegmentFileName(4))).ok());
  EXPECT_EQ(*log->DeleteSegmentsBefore(5), 0);
  EXPECT_EQ(*log->DeleteSegmentsBefore(1000), 15);
  EXPECT_EQ(log->Segments().size(), 1u);
}

TEST(CommitLog, ReportsHowLongWrittenRecordsWaitedForTheirFsync) {
  Fixture f;
  const milliseconds interval(20);
  auto log = f.Open(CommitLogOptions{.sync_interval = interval});
  EXPECT_EQ(log->sync_lag().max.count(), 0);
  for (int round = 0; round < 3; ++round) {
    const uint64_t seq = *log->Append("a");
    // Fsynced by the periodic timer, no earlier than one interval after the write started.
    while (log->synced_sequence() < seq) std::this_thread::sleep_for(milliseconds(1));
    const CommitLog::SyncLag lag = log->sync_lag();
    EXPECT_GE(lag.last, interval) << "round " << round;
    EXPECT_GE(lag.max, lag.last);
  }
  EXPECT_TRUE(log->Close().ok());
}

}  // namespace
}  // namespace collide
