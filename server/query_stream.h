#pragma once

#include <cstddef>
#include <vector>

#include "collide/v1/collide.pb.h"
#include "grpcpp/support/server_callback.h"
#include "query/batch.h"
#include "query/hit.h"
#include "server/auth.h"
#include "server/service_context.h"

namespace collide {

/// The reactor of one QueryStream call: read a batch, answer it, write the answer, and read the
/// next only once the write completed (one message in each direction at a time: the outbound
/// queue is bounded and HTTP/2 flow control pushes back on the client).
///
/// Each batch: the scene is looked up, every query validated (a bad query gets its own error;
/// the others are answered), and all valid queries run under one Scene::Read, so the answer is
/// computed against the one version it is tagged with. Query, result and hit vectors are reused
/// from batch to batch.
class QueryStreamReactor final
    : public grpc::ServerBidiReactor<v1::QueryBatch, v1::QueryBatchResult> {
 public:
  /// Starts reading. `principal` (already checked for the reader role) and `context` outlive
  /// the call.
  QueryStreamReactor(const ServiceContext& context, const Principal* principal);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  // Answers request_ into response_.
  void Answer();

  const ServiceContext& context_;
  const Principal* const principal_;
  v1::QueryBatch request_;
  v1::QueryBatchResult response_;
  // Per-batch scratch, reused.
  std::vector<Query> queries_;
  std::vector<size_t> slots_;  // the request index of each entry of queries_
  std::vector<QueryResult> results_;
  std::vector<QueryHit> hits_;
};

}  // namespace collide
