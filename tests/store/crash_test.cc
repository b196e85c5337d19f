// The crash test: a real child process (crash_child/main.cc) streams batches into a database
// and reports each acknowledgement; it is killed with SIGKILL at random moments and restarted.
// After every kill the test opens the data directory itself and checks that
//   - the scene's state equals a replay of the deterministic batch stream up to the last batch
//     the scene says it applied (its client mark), bit for bit;
//   - that point never moves backwards, and
//   - it is at or after every acknowledged batch (0 acknowledged batches lost), under `always`
//     and under `periodic` alike: `periodic` acknowledges once the record is written to the OS,
//     and a SIGKILL leaves the page cache. (What a machine crash may lose under `periodic` is
//     tested in recovery_test.cc, with the in-memory file system that drops unsynced bytes.)
//
// COLLIDE_CRASH_CYCLES=<n> sets the number of kill/restart cycles per policy (default 50 for
// `always`, 20 for `periodic`); COLLIDE_CRASH_SEED=<n> the seed.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "store/batch_stream.h"
#include "store/database.h"
#include "store/store_testing.h"

#ifndef COLLIDE_CRASH_CHILD
#error "COLLIDE_CRASH_CHILD must name the crash child binary (tests/CMakeLists.txt)"
#endif

namespace collide {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  uint64_t parsed = 0;
  return value != nullptr && absl::SimpleAtoi(value, &parsed) ? parsed : fallback;
}

// A running child and the lines it printed.
class Child {
 public:
  Child(const std::string& dir, uint64_t seed, DurabilityPolicy policy) {
    int fds[2];
    if (::pipe(fds) != 0) {
      ADD_FAILURE() << "pipe failed";
      return;
    }
    const std::string seed_text = std::to_string(seed);
    const std::string policy_text(DurabilityPolicyName(policy));
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl(COLLIDE_CRASH_CHILD, COLLIDE_CRASH_CHILD, dir.c_str(), seed_text.c_str(),
              policy_text.c_str(), static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Child() {
    Kill();
    if (fd_ >= 0) ::close(fd_);
  }

  // The next complete line, or false at EOF or when `deadline` passes.
  bool ReadLine(Clock::time_point deadline, std::string* line) {
    while (true) {
      const size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        *line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return true;
      }
      if (eof_) return false;
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
      if (n <= 0) {
        eof_ = true;
      } else {
        buffer_.append(chunk, static_cast<size_t>(n));
      }
    }
  }

  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

struct Totals {
  int cycles = 0;
  int early_kills = 0;  // before the child reported ready (during recovery or start-up)
  uint64_t acknowledged = 0;
  uint64_t lost = 0;
  uint64_t torn_tails = 0;
  uint64_t last_sequence = 0;
};

Totals RunCrashCycles(DurabilityPolicy policy, int cycles, uint64_t seed) {
  TempDir dir;
  std::mt19937_64 rng(seed);
  const DatabaseOptions options = CrashTestOptions(policy);
  Scene expected(kCrashScene, SceneOptions{});
  BatchStream replay(seed);
  uint64_t recovered = 0;  // the sequence the last recovery found
  Totals totals;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    SCOPED_TRACE(testing::Message() << "policy " << DurabilityPolicyName(policy) << " seed " << seed
                                    << " cycle " << cycle);
    // The client sequences acknowledged in this run.
    std::vector<uint64_t> acks;
    {
      Child child(dir.path(), seed, policy);
      std::string line;
      const bool early = rng() % 10 == 0;
      Clock::time_point kill_at;
      if (early) {
        kill_at = Clock::now() + milliseconds(rng() % 40);
        ++totals.early_kills;
      } else {
        const Clock::time_point ready_deadline = Clock::now() + std::chrono::seconds(60);
        bool ready = false;
        while (!ready && child.ReadLine(ready_deadline, &line)) {
          if (line.rfind("error", 0) == 0) ADD_FAILURE() << line;
          ready = line.rfind("ready ", 0) == 0;
        }
        if (!ready) {
          ADD_FAILURE() << "the child never became ready";
          return totals;
        }
        kill_at = Clock::now() + milliseconds(1 + rng() % 120);
      }
      auto take = [&](const std::string& l) {
        std::vector<std::string> parts = absl::StrSplit(l, ' ');
        if (parts[0] == "error") ADD_FAILURE() << l;
        uint64_t k = 0, version = 0;
        if (parts[0] != "ack" || parts.size() != 4 || !absl::SimpleAtoi(parts[1], &k) ||
            !absl::SimpleAtoi(parts[2], &version)) {
          return;
        }
        EXPECT_EQ(version, k);  // batch k produces version k (creation is version 0)
        if (policy == DurabilityPolicy::kAlways) {
          EXPECT_EQ(parts[3], "1");
        }
        acks.push_back(k);
      };
      while (child.ReadLine(kill_at, &line)) take(line);
      child.Kill();
      // Lines written before the kill are still in the pipe.
      while (child.ReadLine(Clock::now() + std::chrono::seconds(5), &line)) take(line);
    }

    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir.path(), options);
    if (!db.ok()) {
      ADD_FAILURE() << "recovery failed: " << db.status();
      return totals;
    }
    totals.torn_tails += (*db)->recovery_report().torn_tail.has_value();
    uint64_t n = 0;
    SceneState state;
    if (absl::StatusOr<std::shared_ptr<const Scene>> scene = (*db)->GetScene(kCrashScene);
        scene.ok()) {
      state = (*scene)->CaptureState();
      std::optional<ClientMark> mark = (*scene)->GetClientMark(kCrashClient);
      n = mark.has_value() ? mark->sequence : 0;
    } else {
      EXPECT_TRUE(acks.empty()) << "batches were acknowledged in a scene that is gone";
    }
    EXPECT_GE(n, recovered) << "recovered state went backwards";
    recovered = n;
    while (replay.count() < n) {
      const uint64_t k = replay.count() + 1;
      if (!expected.Apply(replay.Next(), ClientTag{kCrashClient, k}).ok()) {
        ADD_FAILURE() << "the replay of batch " << k << " failed";
        return totals;
      }
    }
    if (n > 0 && !SameState(state, expected.CaptureState())) {
      ADD_FAILURE() << "recovered state differs from a replay up to batch " << n << ": "
                    << SameState(state, expected.CaptureState()).message();
      return totals;
    }
    for (const uint64_t k : acks) {
      ++totals.acknowledged;
      if (k <= n) continue;
      ++totals.lost;
      ADD_FAILURE() << "acknowledged batch " << k << " lost (recovered up to " << n << ")";
    }
    EXPECT_TRUE((*db)->Close().ok());
    ++totals.cycles;
    totals.last_sequence = n;
  }
  return totals;
}

void Report(DurabilityPolicy policy, const Totals& t) {
  std::printf(
      "crash test (%s): %d kill/restart cycles (%d before ready), %llu acknowledgements "
      "read, %llu acknowledged batches lost, %llu torn tails cut, %llu batches applied\n",
      std::string(DurabilityPolicyName(policy)).c_str(), t.cycles, t.early_kills,
      static_cast<unsigned long long>(t.acknowledged), static_cast<unsigned long long>(t.lost),
      static_cast<unsigned long long>(t.torn_tails),
      static_cast<unsigned long long>(t.last_sequence));
}

TEST(CrashTest, AlwaysLosesNoAcknowledgedBatchAcrossSigkills) {
  const int cycles = static_cast<int>(EnvOr("COLLIDE_CRASH_CYCLES", 50));
  const uint64_t seed = EnvOr("COLLIDE_CRASH_SEED", 2024);
  Totals totals = RunCrashCycles(DurabilityPolicy::kAlways, cycles, seed);
  Report(DurabilityPolicy::kAlways, totals);
  EXPECT_EQ(totals.cycles, cycles);
  EXPECT_EQ(totals.lost, 0u);
  EXPECT_GT(totals.acknowledged, 0u);
}

TEST(CrashTest, PeriodicLosesNoAcknowledgedBatchAcrossSigkills) {
  const int cycles = static_cast<int>(EnvOr("COLLIDE_CRASH_CYCLES", 20));
  const uint64_t seed = EnvOr("COLLIDE_CRASH_SEED", 2024) + 1;
  Totals totals = RunCrashCycles(DurabilityPolicy::kPeriodic, cycles, seed);
  Report(DurabilityPolicy::kPeriodic, totals);
  EXPECT_EQ(totals.cycles, cycles);
  EXPECT_EQ(totals.lost, 0u);
  EXPECT_GT(totals.acknowledged, 0u);
}

}  // namespace
}  // namespace collide
