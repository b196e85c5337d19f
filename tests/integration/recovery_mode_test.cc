// collide-server's --recovery flag over a data directory whose log holds a record that no longer
// applies (a move tagged with tick 2^64 - 1, as an older server logged it; see
// WritePoisonedDirectory): the default, strict, stops before serving with a message naming the
// segment, the offset and the way out; --recovery=skip serves, logs the dropped record, and every
// later acknowledged write is there; a strict restart afterwards serves too.

#include <signal.h>

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"
#include "store/store_testing.h"

namespace collide::integration {
namespace {

TEST(RecoveryMode, StrictStopsWithTheSegmentAndOffsetAndSkipServesTheRest) {
  TempDir dir("recovery");
  const std::string data = dir.File("data");
  absl::StatusOr<PoisonedLog> poisoned = WritePoisonedDirectory(data);
  ASSERT_TRUE(IsOk(poisoned));

  ServerConfig config;
  config.extra_flags = {absl::StrCat("--data_dir=", data)};
  auto strict = ServerProcess::Start(config);
  ASSERT_FALSE(strict.ok()) << "the server applied a record with tick 2^64 - 1";
  const std::string why(strict.status().message());
  EXPECT_TRUE(absl::StrContains(
      why, absl::StrCat(poisoned->segment, " at offset ", poisoned->offset, ": record 4")))
      << why;
  EXPECT_TRUE(absl::StrContains(why, "recovery mode skip")) << why;

  config.extra_flags.push_back("--recovery=skip");
  auto skip = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(skip));
  EXPECT_TRUE(absl::StrContains((*skip)->Logs(), "dropped record 4 of scene \"t\""))
      << (*skip)->Logs();
  auto client = (*skip)->NewClient();
  auto scene = client->GetScene("t");
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().version(), 4u);
  EXPECT_EQ(scene->stats().tick(), 5u);
  const uint64_t ids[] = {1};
  auto bodies = client->GetBodies("t", ids);
  ASSERT_TRUE(IsOk(bodies));
  ASSERT_EQ(bodies->bodies_size(), 1);
  EXPECT_EQ(bodies->bodies(0).pose().position().x(), 9.0f);
  ASSERT_TRUE(IsOk((*skip)->Stop(SIGTERM)));

  config.extra_flags.pop_back();
  auto again = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(again)) << "the skip was not made permanent";
  EXPECT_EQ((*again)->NewClient()->GetScene("t")->stats().version(), 4u);
}

}  // namespace
}  // namespace collide::integration
