// The child process of the store's crash test (tests/store/crash_test.cc).
//
//   collide-crash-child <data dir> <seed> <always|periodic|none>
//
// Opens a database on the data directory (recovering it), creates the scene if it is missing,
// and resumes the deterministic batch stream of <seed> after the last batch the scene applied.
// It streams batches forever, up to 8 in flight, and prints one line per event to stdout with a
// single write() each (so lines survive a SIGKILL whole or not at all):
//   ready <last applied sequence>
//   ack <client sequence> <version> <durable 0|1>
//   error <message>            (then exits with status 2)

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <semaphore>
#include <string>

#include "absl/strings/numbers.h"
#include "scene/scene_options.h"
#include "store/batch_stream.h"
#include "store/database.h"
#include "store/store_testing.h"

namespace collide {
namespace {

void Say(const std::string& line) {
  const std::string out = line + "\n";
  // One write per line: a pipe write of up to PIPE_BUF bytes is atomic.
  ssize_t ignored = ::write(STDOUT_FILENO, out.data(), out.size());
  (void)ignored;
}

[[noreturn]] void Fail(const std::string& message) {
  Say("error " + message);
  std::_Exit(2);
}

int Run(int argc, char** argv) {
  uint64_t seed = 0;
  if (argc != 4 || !absl::SimpleAtoi(argv[2], &seed)) {
    std::fprintf(stderr, "usage: %s <data dir> <seed> <always|periodic|none>\n", argv[0]);
    return 1;
  }
  absl::StatusOr<DurabilityPolicy> policy = ParseDurabilityPolicy(argv[3]);
  if (!policy.ok()) Fail(std::string(policy.status().message()));
  absl::StatusOr<std::unique_ptr<Database>> opened =
      Database::Open(argv[1], CrashTestOptions(*policy));
  if (!opened.ok()) Fail(opened.status().ToString());
  Database& db = **opened;
  if (!db.GetScene(kCrashScene).ok()) {
    absl::Status created = db.CreateScene(kCrashScene, SceneOptions{});
    if (!created.ok()) Fail(created.ToString());
  }
  absl::StatusOr<std::shared_ptr<const Scene>> scene = db.GetScene(kCrashScene);
  if (!scene.ok()) Fail(scene.status().ToString());
  std::optional<ClientMark> mark = (*scene)->GetClientMark(kCrashClient);
  const uint64_t start = mark.has_value() ? mark->sequence : 0;

  BatchStream stream(seed);
  for (uint64_t k = 1; k <= start; ++k) stream.Next();
  Say("ready " + std::to_string(start));

  // Never destroyed: callbacks may run on the log's thread until the process is killed.
  auto* window = new std::counting_semaphore<64>(8);
  for (uint64_t k = start + 1;; ++k) {
    UpdateBatch batch = stream.Next();
    window->acquire();
    db.Apply(kCrashScene, ClientTag{kCrashClient, k}, batch,
             [k, window](absl::StatusOr<ApplyAck> ack) {
               if (!ack.ok()) Fail(ack.status().ToString());
               char line[96];
               std::snprintf(line, sizeof(line), "ack %" PRIu64 " %" PRIu64 " %d", k, ack->version,
                             ack->durable ? 1 : 0);
               Say(line);
               window->release();
             });
  }
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) { return collide::Run(argc, argv); }
