#pragma once

#include <signal.h>

namespace collide {

/// The signals that stop a server, SIGINT and SIGTERM, taken out of asynchronous delivery so
/// that one thread can wait for them. Construct it in main before any thread starts (gRPC's
/// included): it blocks the two signals in the calling thread, and every thread started later
/// inherits the block, so none of them is interrupted; then Wait() where the server should stop.
class ShutdownSignals {
 public:
  /// Blocks SIGINT and SIGTERM in the calling thread.
  ShutdownSignals();
  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  /// Waits until SIGINT or SIGTERM is sent to the process; returns its number.
  int Wait();

 private:
  sigset_t signals_;
};

}  // namespace collide
