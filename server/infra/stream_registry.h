#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "grpcpp/server_context.h"

namespace collide {

/// The kinds of streaming calls the service serves (kExport: ExportScene, kImport: ImportScene,
/// kInterest: Interest, kUpload: UploadAsset).
enum class StreamKind : uint8_t {
  kUpdate = 0,
  kQuery = 1,
  kWatch = 2,
  kExport = 3,
  kImport = 4,
  kInterest = 5,
  kUpload = 6,
};
/// How many StreamKinds there are.
inline constexpr int kStreamKindCount = 7;

/// Counters of the live streams of a server (GetServerStats).
struct StreamStats {
  /// Streams open now, per kind.
  uint32_t update_streams = 0;
  uint32_t query_streams = 0;
  uint32_t watch_streams = 0;
  uint32_t export_streams = 0;
  uint32_t import_streams = 0;
  uint32_t interest_streams = 0;
  uint32_t upload_streams = 0;
  /// Streams opened since the start, and refused because max_streams (or max_watch_streams,
  /// max_import_streams, max_interest_streams) were open.
  uint64_t opened = 0;
  uint64_t refused = 0;
  /// Streams ended with RESOURCE_EXHAUSTED because their client stopped reading (or, for an
  /// import, stopped sending).
  uint64_t stalled = 0;
  /// Bytes of answers handed to gRPC and not yet written to the network (one message at most
  /// per stream: each stream writes one answer at a time).
  uint64_t outbound_bytes = 0;
  /// opened, refused and stalled per kind (indexed by StreamKind).
  std::array<uint64_t, kStreamKindCount> opened_by_kind{};
  std::array<uint64_t, kStreamKindCount> refused_by_kind{};
  std::array<uint64_t, kStreamKindCount> stalled_by_kind{};
};

class StreamRegistry;

/// One registered stream. The stream reports each answer it writes; the handle unregisters the
/// stream when released (just before the reactor finishes the call) or destroyed.
class StreamHandle {
 public:
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  ~StreamHandle();

  /// An answer of `bytes` bytes was handed to gRPC (StartWrite).
  void WriteStarted(size_t bytes);
  /// That answer was written (or failed: OnWriteDone).
  void WriteDone();
  /// A read was started (StartRead) on a stream whose client is expected to keep sending (an
  /// import): the watchdog ends the stream if nothing arrives for the stall timeout.
  void ReadStarted();
  /// That read completed (OnReadDone).
  void ReadDone();
  /// Unregisters the stream now (its slot under the bounds is free), before the reactor's
  /// Finish: a client that sees the stream end may open another at once. Idempotent; the
  /// destructor releases a handle not released before.
  void Release();

 private:
  friend class StreamRegistry;
  StreamHandle(StreamRegistry* registry, StreamKind kind, grpc_call* call)
      : registry_(registry), kind_(kind), call_(call) {}

  StreamRegistry* const registry_;
  const StreamKind kind_;
  grpc_call* const call_;
  // Steady-clock nanoseconds when the write in progress started; 0 when none is.
  std::atomic<int64_t> write_started_ns_{0};
  std::atomic<size_t> write_bytes_{0};
  // Steady-clock nanoseconds when the read in progress started (ReadStarted); 0 when none is.
  std::atomic<int64_t> read_started_ns_{0};
  // Set once the watchdog ended the stream.
  std::atomic<bool> stalled_{false};
};

/// The streams a server has open: counts them per kind, refuses new ones past a bound, and ends
/// with RESOURCE_EXHAUSTED a stream whose answer could not be written for `stall_timeout`
/// (its client stopped reading, so HTTP/2 flow control holds the answer), or whose awaited
/// message (ReadStarted: an import's next message) did not come for as long: a watchdog thread
/// checks the streams' writes and awaited reads a few times per timeout. The status reaches the
/// client at once (the server sends its trailers and resets the stream), and the reactor, whose
/// write then fails, finishes; its memory is bounded meanwhile by the one answer it holds.
/// Thread-safe.
class StreamRegistry {
 public:
  /// `max_streams`: the most streams open at once; `max_watch_streams`: the most of them that
  /// are Watch streams; `max_import_streams`: the most that are ImportScene or UploadAsset
  /// streams together (each buffers its scene or asset until its end); `max_interest_streams`:
  /// the most that are Interest streams. `stall_timeout`: 0 disables the watchdog.
  StreamRegistry(uint32_t max_streams, std::chrono::milliseconds stall_timeout,
                 uint32_t max_watch_streams = UINT32_MAX, uint32_t max_import_streams = UINT32_MAX,
                 uint32_t max_interest_streams = UINT32_MAX);
  StreamRegistry(const StreamRegistry&) = delete;
  StreamRegistry& operator=(const StreamRegistry&) = delete;
  /// Stops the watchdog. Every handle must be gone (the gRPC server shut down).
  ~StreamRegistry();

  /// Registers a stream of `call`; RESOURCE_EXHAUSTED `streams: ...` when max_streams are open,
  /// for a Watch stream when max_watch_streams Watch streams are, for an import or an upload
  /// when max_import_streams imports and uploads are, for an Interest stream when
  /// max_interest_streams are.
  absl::StatusOr<std::unique_ptr<StreamHandle>> Open(StreamKind kind,
                                                     grpc::CallbackServerContext* call);

  /// The current counters.
  StreamStats stats() const;

 private:
  friend class StreamHandle;
  void Close(StreamHandle* handle);
  void Watch();

  const uint32_t max_streams_;
  const std::chrono::milliseconds stall_timeout_;
  const uint32_t max_watch_streams_;
  const uint32_t max_import_streams_;
  const uint32_t max_interest_streams_;
  mutable Mutex mu_;
  CondVar stop_cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<StreamHandle*> handles_ ABSL_GUARDED_BY(mu_);
  uint32_t live_[kStreamKindCount] ABSL_GUARDED_BY(mu_) = {};
  uint64_t opened_[kStreamKindCount] ABSL_GUARDED_BY(mu_) = {};
  uint64_t refused_[kStreamKindCount] ABSL_GUARDED_BY(mu_) = {};
  std::atomic<uint64_t> stalled_[kStreamKindCount] = {};
  std::atomic<uint64_t> outbound_bytes_{0};
  std::thread watchdog_;
};

}  // namespace collide
