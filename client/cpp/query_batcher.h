#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/cpp/query_stream.h"
#include "collide/v1/collide.pb.h"

namespace collide::client {

class Client;

/// When a QueryBatcher sends what it collected.
struct QueryBatcherOptions {
  /// A batch is sent as soon as it holds this many queries (>= 1; at most the server's
  /// --max_queries_per_batch).
  size_t max_batch_size = 256;
  /// A query waits at most this long for others to join its batch.
  absl::Duration max_delay = absl::Milliseconds(1);
};

/// One query's answer from a QueryBatcher.
struct BatchedQueryResult {
  /// The scene version the query's batch was answered against.
  uint64_t version = 0;
  /// The query's hits (request_id echoed as given).
  v1::QueryResult result;
};

/// Collects queries for one scene from any number of threads and sends them as QueryBatches on
/// one QueryStream: a batch goes out when it holds max_batch_size queries, when its oldest query
/// has waited max_delay, or on Flush. Batches are pipelined (the next may go out before the
/// previous one is answered). Each caller gets its own query's answer, through a future or a
/// callback. A query the server rejected, a rejected batch or a broken stream becomes an error
/// status for the queries concerned; the next batch opens a new stream.
class QueryBatcher {
 public:
  /// Receives one query's answer or error. Runs on the batcher's threads: it must not block for
  /// long nor call Close.
  using Callback = std::function<void(absl::StatusOr<BatchedQueryResult>)>;

  /// A batcher for `scene` on `client` (which must outlive it). The stream opens with the first
  /// batch. INVALID_ARGUMENT for an empty scene or max_batch_size 0.
  static absl::StatusOr<std::unique_ptr<QueryBatcher>> Open(Client* client, std::string_view scene,
                                                            QueryBatcherOptions options = {});
  QueryBatcher(const QueryBatcher&) = delete;
  QueryBatcher& operator=(const QueryBatcher&) = delete;
  /// Close().
  ~QueryBatcher();

  /// Adds `query`; its batch is answered only once the scene's version is at least
  /// `min_version` (the batch waits for the highest min_version of its queries).
  std::future<absl::StatusOr<BatchedQueryResult>> Add(v1::Query query, uint64_t min_version = 0);
  /// The same, with the answer passed to `done`.
  void Add(v1::Query query, Callback done, uint64_t min_version = 0);
  /// Sends the queries collected so far now, without waiting for max_delay (does not wait for
  /// the answers).
  void Flush();
  /// Sends what is left, waits for every answer, closes the stream and stops the threads.
  /// Queries added afterwards fail with FAILED_PRECONDITION.
  void Close();

  /// Batches sent so far.
  uint64_t batches_sent() const;

 private:
  struct Entry {
    v1::Query query;
    Callback done;
    uint64_t min_version;
  };
  // The callbacks of one batch sent and not answered yet.
  struct InFlight {
    std::vector<Callback> done;
  };

  QueryBatcher(Client* client, std::string scene, QueryBatcherOptions options);

  // The flusher thread: waits for a batch to be due, sends it.
  void FlushLoop();
  // The reader thread: reads answers in order and hands them out.
  void ReadLoop();
  // Sends `entries` as one batch (opening a stream if none works).
  void SendBatch(std::vector<Entry> entries);

  Client* const client_;
  const std::string scene_;
  const QueryBatcherOptions options_;

  mutable absl::Mutex mu_;
  std::vector<Entry> collected_ ABSL_GUARDED_BY(mu_);
  absl::Time oldest_at_ ABSL_GUARDED_BY(mu_);
  bool flush_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool flusher_done_ ABSL_GUARDED_BY(mu_) = false;
  // The stream; replaced by the flusher only when broken and nothing is in flight on it.
  std::unique_ptr<QueryStreamSession> session_ ABSL_GUARDED_BY(mu_);
  bool session_broken_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<InFlight> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t batches_sent_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread flusher_;
  std::thread reader_;
  absl::Mutex close_mu_;
  bool closed_ ABSL_GUARDED_BY(close_mu_) = false;
};

}  // namespace collide::client
