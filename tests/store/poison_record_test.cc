// A logged record that no longer applies (a batch an older server accepted and current validation
// refuses, such as a tick of 2^64 - 1, which once hung the server at every restart): under the
// strict recovery mode, start-up stops at once with DATA_LOSS naming the segment, the offset and
// the record; under the skip mode the record is dropped, its version kept, every later record
// applied, and a checkpoint makes the drop permanent, so a later strict start succeeds.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/database.h"
#include "store/store_testing.h"

namespace collide {
namespace {

UpdateBatch MoveTo(float x, std::optional<uint64_t> tick) {
  UpdateBatch batch;
  batch.tick = tick;
  batch.ops.push_back(SetPoseOp(1, Pose{.position = {x, 0, 0}}));
  return batch;
}

TEST(PoisonRecord, StrictRecoveryStopsNamingTheSegmentOffsetAndRecord) {
  TempDir dir;
  absl::StatusOr<PoisonedLog> poisoned = WritePoisonedDirectory(dir.path());
  ASSERT_TRUE(poisoned.ok()) << poisoned.status();
  const std::string& segment = poisoned->segment;
  const uint64_t offset = poisoned->offset;
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir.path(), DatabaseOptions{});
  ASSERT_FALSE(db.ok()) << "a log record with tick 2^64 - 1 was applied";
  EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss);
  const std::string message(db.status().message());
  EXPECT_TRUE(
      absl::StrContains(message, absl::StrCat(segment, " at offset ", offset, ": record 4")))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "tick: must be at most 9223372036854775807")) << message;
  EXPECT_TRUE(absl::StrContains(message, "recovery mode skip")) << message;
}

TEST(PoisonRecord, SkipRecoveryDropsTheRecordKeepsItsVersionAndAppliesTheRest) {
  TempDir dir;
  absl::StatusOr<PoisonedLog> poisoned = WritePoisonedDirectory(dir.path());
  ASSERT_TRUE(poisoned.ok()) << poisoned.status();
  const std::string& segment = poisoned->segment;
  const uint64_t offset = poisoned->offset;
  {
    DatabaseOptions options;
    options.recovery = RecoveryMode::kSkip;
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir.path(), options);
    ASSERT_TRUE(db.ok()) << db.status();
    const RecoveryReport& report = (*db)->recovery_report();
    ASSERT_EQ(report.skipped.size(), 1u);
    EXPECT_EQ(report.skipped[0].file, segment);
    EXPECT_EQ(report.skipped[0].offset, offset);
    EXPECT_EQ(report.skipped[0].sequence, 4u);
    EXPECT_EQ(report.skipped[0].scene, "t");
    EXPECT_TRUE(absl::StartsWith(report.skipped[0].reason, "tick:")) << report.skipped[0].reason;
    std::shared_ptr<const Scene> scene = *(*db)->GetScene("t");
    EXPECT_EQ(scene->version(), 4u);
    EXPECT_EQ(scene->tick(), 5u);
    EXPECT_EQ(scene->GetBody(1)->pose.position.x, 9.0f);
    // The dropped batch left no deduplication mark: its client may send it again (and be told
    // what is wrong with it).
    UpdateBatch fixed = MoveTo(2, 6);
    absl::StatusOr<ApplyAck> resent =
        (*db)->ApplyAndWait("t", ClientTag{.client_id = 7, .sequence = 1}, fixed);
    ASSERT_TRUE(resent.ok()) << resent.status();
    EXPECT_FALSE(resent->duplicate);
    EXPECT_EQ(resent->version, 5u);
    ASSERT_TRUE((*db)->Close().ok());
  }
  // The skip was made permanent by a checkpoint: a strict start now succeeds.
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir.path(), DatabaseOptions{});
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_TRUE((*db)->recovery_report().skipped.empty());
  std::shared_ptr<const Scene> scene = *(*db)->GetScene("t");
  EXPECT_EQ(scene->version(), 5u);
  EXPECT_EQ(scene->tick(), 6u);
  EXPECT_EQ(scene->GetBody(1)->pose.position.x, 2.0f);
}

}  // namespace
}  // namespace collide
