#include "client/cpp/grpc_runtime.h"

#include <dirent.h>
#include <grpc/grpc.h>

#include <chrono>
#include <thread>

namespace collide::client {
namespace {

// How long the destructor waits for gRPC's own threads to finish before it lets the program
// exit anyway: far above the few milliseconds they take, far below anything a user would notice.
constexpr std::chrono::milliseconds kTeardownLimit{2000};
constexpr std::chrono::milliseconds kPoll{1};

// The number of threads in this process (the entries of /proc/self/task), or -1 when it cannot
// be read.
int ThreadCount() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

}  // namespace

GrpcRuntime::GrpcRuntime() { grpc_init(); }

// grpc_shutdown_blocking runs the clean-up here when gRPC's count of users reaches zero on this
// call. It does not always: a channel's last reference can still be held for a few milliseconds
// by one of gRPC's threads (finishing a TLS handshake, say), and then the clean-up runs on a
// detached thread when that reference goes. Exiting before it has joined gRPC's threads leaves
// them alive at exit with their per-thread state (OpenSSL's error state among it), which
// LeakSanitizer can report as leaked. So wait, bounded, until gRPC is no longer initialised and
// this is the process's only thread.
GrpcRuntime::~GrpcRuntime() {
  grpc_shutdown_blocking();
  const auto give_up = std::chrono::steady_clock::now() + kTeardownLimit;
  while ((grpc_is_initialized() || ThreadCount() > 1) &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace collide::client
