#include "client/cpp/query_batcher.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"

namespace collide::client {
namespace {

void FailAll(std::vector<QueryBatcher::Callback>& done, const absl::Status& status) {
  for (QueryBatcher::Callback& callback : done) callback(status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<QueryBatcher>> QueryBatcher::Open(Client* client,
                                                                 std::string_view scene,
                                                                 QueryBatcherOptions options) {
  if (client == nullptr) return absl::InvalidArgumentError("client: must not be null");
  if (scene.empty()) return absl::InvalidArgumentError("scene: must not be empty");
  if (options.max_batch_size == 0) {
    return absl::InvalidArgumentError("max_batch_size: must be at least 1");
  }
  std::unique_ptr<QueryBatcher> batcher(
      new QueryBatcher(client, std::string(scene), std::move(options)));
  batcher->flusher_ = std::thread([b = batcher.get()] { b->FlushLoop(); });
  batcher->reader_ = std::thread([b = batcher.get()] { b->ReadLoop(); });
  return batcher;
}

QueryBatcher::QueryBatcher(Client* client, std::string scene, QueryBatcherOptions options)
    : client_(client), scene_(std::move(scene)), options_(std::move(options)) {}

QueryBatcher::~QueryBatcher() { Close(); }

uint64_t QueryBatcher::batches_sent() const {
  absl::MutexLock lock(&mu_);
  return batches_sent_;
}

std::future<absl::StatusOr<BatchedQueryResult>> QueryBatcher::Add(v1::Query query,
                                                                  uint64_t min_version) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<BatchedQueryResult>>>();
  std::future<absl::StatusOr<BatchedQueryResult>> future = promise->get_future();
  Add(
      std::move(query),
      [promise](absl::StatusOr<BatchedQueryResult> answer) {
        promise->set_value(std::move(answer));
      },
      min_version);
  return future;
}

void QueryBatcher::Add(v1::Query query, Callback done, uint64_t min_version) {
  {
    absl::MutexLock lock(&mu_);
    if (!closing_) {
      if (collected_.empty()) oldest_at_ = absl::Now();
      collected_.push_back(Entry{std::move(query), std::move(done), min_version});
      return;
    }
  }
  done(absl::FailedPreconditionError("query batcher: already closed"));
}

void QueryBatcher::Flush() {
  absl::MutexLock lock(&mu_);
  if (!collected_.empty()) flush_requested_ = true;
}

void QueryBatcher::Close() {
  absl::MutexLock close_lock(&close_mu_);
  if (closed_) return;
  closed_ = true;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  if (flusher_.joinable()) flusher_.join();
  if (reader_.joinable()) reader_.join();
  std::unique_ptr<QueryStreamSession> session;
  {
    absl::MutexLock lock(&mu_);
    session = std::move(session_);
  }
  if (session != nullptr) session->Finish().IgnoreError();
}

void QueryBatcher::FlushLoop() {
  while (true) {
    std::vector<Entry> entries;
    {
      absl::MutexLock lock(&mu_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !collected_.empty() || closing_;
      };
      mu_.Await(absl::Condition(&has_work));
      if (collected_.empty()) break;  // closing, nothing left
      auto due_now = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return collected_.size() >= options_.max_batch_size || flush_requested_ || closing_;
      };
      mu_.AwaitWithDeadline(absl::Condition(&due_now), oldest_at_ + options_.max_delay);
      size_t take = std::min(collected_.size(), options_.max_batch_size);
      entries.assign(std::make_move_iterator(collected_.begin()),
                     std::make_move_iterator(collected_.begin() + take));
      collected_.erase(collected_.begin(), collected_.begin() + take);
      // What stays was added after the batch's first query: its own clock starts now at the
      // latest (an approximation that never waits longer than max_delay past a flush).
      if (!collected_.empty()) oldest_at_ = absl::Now();
      if (collected_.empty()) flush_requested_ = false;
    }
    SendBatch(std::move(entries));
  }
  absl::MutexLock lock(&mu_);
  flusher_done_ = true;
}

void QueryBatcher::SendBatch(std::vector<Entry> entries) {
  v1::QueryBatch batch;
  batch.set_scene(scene_);
  InFlight in_flight;
  in_flight.done.reserve(entries.size());
  uint64_t min_version = 0;
  for (Entry& entry : entries) {
    *batch.add_queries() = std::move(entry.query);
    in_flight.done.push_back(std::move(entry.done));
    min_version = std::max(min_version, entry.min_version);
  }
  batch.set_min_version(min_version);

  // A broken stream is replaced once the reader has failed everything in flight on it.
  std::unique_ptr<QueryStreamSession> old_session;
  QueryStreamSession* session = nullptr;
  {
    absl::MutexLock lock(&mu_);
    auto reader_caught_up = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !session_broken_ || in_flight_.empty();
    };
    mu_.Await(absl::Condition(&reader_caught_up));
    if (session_broken_ || session_ == nullptr) {
      old_session = std::move(session_);
      session_broken_ = false;
    } else {
      // In flight before it is written, so that the reader finds it when the answer comes.
      session = session_.get();
      ++batches_sent_;
      in_flight_.push_back(std::move(in_flight));
    }
  }
  if (session == nullptr) {
    old_session.reset();  // cancels and finishes the broken stream
    absl::StatusOr<std::unique_ptr<QueryStreamSession>> opened = client_->OpenQueryStream(scene_);
    if (!opened.ok()) {
      FailAll(in_flight.done, opened.status());
      return;
    }
    absl::MutexLock lock(&mu_);
    session_ = *std::move(opened);
    session = session_.get();
    ++batches_sent_;
    in_flight_.push_back(std::move(in_flight));
  }
  if (session->Send(batch).ok()) return;
  // The stream broke: the reader's Read fails too and fails every batch in flight on it, this
  // one included; the next batch opens a new stream once it has.
  session->Cancel();
  absl::MutexLock lock(&mu_);
  session_broken_ = true;
}

void QueryBatcher::ReadLoop() {
  while (true) {
    QueryStreamSession* session;
    {
      absl::MutexLock lock(&mu_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !in_flight_.empty() || flusher_done_;
      };
      mu_.Await(absl::Condition(&has_work));
      if (in_flight_.empty()) return;  // the flusher is done: nothing more will be sent
      session = session_.get();
    }
    absl::StatusOr<v1::QueryBatchResult> answer = session->Read();
    std::vector<Callback> done;
    std::vector<std::vector<Callback>> failed;
    {
      absl::MutexLock lock(&mu_);
      if (!answer.ok()) {
        // Everything in flight was on this stream: it will not be answered.
        for (InFlight& batch : in_flight_) failed.push_back(std::move(batch.done));
        in_flight_.clear();
        session_broken_ = true;
      } else {
        done = std::move(in_flight_.front().done);
        in_flight_.pop_front();
      }
    }
    if (!answer.ok()) {
      for (std::vector<Callback>& batch : failed) FailAll(batch, answer.status());
      continue;
    }
    if (absl::Status error = BatchStatus(*answer); !error.ok()) {
      FailAll(done, error);
      continue;
    }
    if (static_cast<size_t>(answer->results_size()) != done.size()) {
      FailAll(done, absl::InternalError(absl::StrCat("query batcher: ", answer->results_size(),
                                                     " results for ", done.size(), " queries")));
      continue;
    }
    for (size_t i = 0; i < done.size(); ++i) {
      v1::QueryResult& result = *answer->mutable_results(static_cast<int>(i));
      if (absl::Status error = ResultStatus(result); !error.ok()) {
        done[i](error);
      } else {
        done[i](BatchedQueryResult{answer->version(), std::move(result)});
      }
    }
  }
}

}  // namespace collide::client
