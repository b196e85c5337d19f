#include "server/infra/stream_registry.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpc/grpc.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* KindName(StreamKind kind) {
  switch (kind) {
    case StreamKind::kUpdate:
      return "UpdateStream";
    case StreamKind::kQuery:
      return "QueryStream";
    case StreamKind::kWatch:
      return "Watch";
    case StreamKind::kExport:
      return "ExportScene";
    case StreamKind::kImport:
      return "ImportScene";
    case StreamKind::kInterest:
      return "Interest";
    case StreamKind::kUpload:
      return "UploadAsset";
  }
  return "stream";
}

}  // namespace

StreamHandle::~StreamHandle() { Release(); }

void StreamHandle::Release() { registry_->Close(this); }

void StreamHandle::WriteStarted(size_t bytes) {
  write_bytes_.store(bytes, std::memory_order_relaxed);
  registry_->outbound_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  // At least 1: 0 means no write in progress.
  write_started_ns_.store(std::max<int64_t>(NowNs(), 1), std::memory_order_release);
}

void StreamHandle::WriteDone() {
  write_started_ns_.store(0, std::memory_order_release);
  registry_->outbound_bytes_.fetch_sub(write_bytes_.exchange(0, std::memory_order_relaxed),
                                       std::memory_order_relaxed);
}

void StreamHandle::ReadStarted() {
  read_started_ns_.store(std::max<int64_t>(NowNs(), 1), std::memory_order_release);
}

void StreamHandle::ReadDone() { read_started_ns_.store(0, std::memory_order_release); }

StreamRegistry::StreamRegistry(uint32_t max_streams, std::chrono::milliseconds stall_timeout,
                               uint32_t max_watch_streams, uint32_t max_import_streams,
                               uint32_t max_interest_streams)
    : max_streams_(max_streams),
      stall_timeout_(stall_timeout),
      max_watch_streams_(max_watch_streams),
      max_import_streams_(max_import_streams),
      max_interest_streams_(max_interest_streams) {
  if (stall_timeout_.count() > 0) watchdog_ = std::thread(&StreamRegistry::Watch, this);
}

StreamRegistry::~StreamRegistry() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  stop_cv_.NotifyAll();
  if (watchdog_.joinable()) watchdog_.join();
}

absl::StatusOr<std::unique_ptr<StreamHandle>> StreamRegistry::Open(
    StreamKind kind, grpc::CallbackServerContext* call) {
  MutexLock lock(&mu_);
  if (handles_.size() >= max_streams_) {
    ++refused_[static_cast<int>(kind)];
    return absl::ResourceExhaustedError(absl::StrCat("streams: the server holds at most ",
                                                     max_streams_,
                                                     " open streams (--max_streams); retry later"));
  }
  if (kind == StreamKind::kWatch &&
      live_[static_cast<int>(StreamKind::kWatch)] >= max_watch_streams_) {
    ++refused_[static_cast<int>(kind)];
    return absl::ResourceExhaustedError(
        absl::StrCat("streams: the server holds at most ", max_watch_streams_,
                     " open Watch streams (--max_watch_streams); retry later"));
  }
  if ((kind == StreamKind::kImport || kind == StreamKind::kUpload) &&
      live_[static_cast<int>(StreamKind::kImport)] + live_[static_cast<int>(StreamKind::kUpload)] >=
          max_import_streams_) {
    ++refused_[static_cast<int>(kind)];
    return absl::ResourceExhaustedError(
        absl::StrCat("streams: the server runs at most ", max_import_streams_,
                     " imports and asset uploads at once (--max_concurrent_imports); retry later"));
  }
  if (kind == StreamKind::kInterest &&
      live_[static_cast<int>(StreamKind::kInterest)] >= max_interest_streams_) {
    ++refused_[static_cast<int>(kind)];
    return absl::ResourceExhaustedError(
        absl::StrCat("streams: the server holds at most ", max_interest_streams_,
                     " open Interest streams (--max_interest_streams); retry later"));
  }
  auto handle = std::unique_ptr<StreamHandle>(new StreamHandle(this, kind, call->c_call()));
  handles_.insert(handle.get());
  ++live_[static_cast<int>(kind)];
  ++opened_[static_cast<int>(kind)];
  return handle;
}

void StreamRegistry::Close(StreamHandle* handle) {
  handle->WriteDone();
  MutexLock lock(&mu_);
  if (handles_.erase(handle) > 0) --live_[static_cast<int>(handle->kind_)];
}

StreamStats StreamRegistry::stats() const {
  MutexLock lock(&mu_);
  StreamStats stats{.update_streams = live_[0],
                    .query_streams = live_[1],
                    .watch_streams = live_[2],
                    .export_streams = live_[3],
                    .import_streams = live_[4],
                    .interest_streams = live_[5],
                    .upload_streams = live_[6],
                    .outbound_bytes = outbound_bytes_.load(std::memory_order_relaxed)};
  for (int kind = 0; kind < kStreamKindCount; ++kind) {
    stats.opened_by_kind[kind] = opened_[kind];
    stats.refused_by_kind[kind] = refused_[kind];
    stats.stalled_by_kind[kind] = stalled_[kind].load(std::memory_order_relaxed);
    stats.opened += opened_[kind];
    stats.refused += refused_[kind];
    stats.stalled += stats.stalled_by_kind[kind];
  }
  return stats;
}

void StreamRegistry::Watch() {
  const auto period = std::clamp(stall_timeout_ / 4, std::chrono::milliseconds(10),
                                 std::chrono::milliseconds(1000));
  const int64_t timeout_ns = std::chrono::nanoseconds(stall_timeout_).count();
  std::unique_lock<Mutex> lock(mu_);
  while (!stop_cv_.WaitFor(lock, period, [this] { return stopping_; })) {
    const int64_t now = NowNs();
    struct Stalled {
      grpc_call* call;
      StreamKind kind;
      bool reading;  // awaiting the client's message (rather than writing an answer)
    };
    std::vector<Stalled> stalled;
    auto overdue = [&](const std::atomic<int64_t>& started_ns) {
      const int64_t started = started_ns.load(std::memory_order_acquire);
      return started != 0 && now - started >= timeout_ns;
    };
    for (StreamHandle* handle : handles_) {
      const bool writing = overdue(handle->write_started_ns_);
      const bool reading = !writing && overdue(handle->read_started_ns_);
      if (!writing && !reading) continue;
      if (handle->stalled_.exchange(true)) continue;
      // The call stays valid while referenced, whatever the reactor does meanwhile.
      grpc_call_ref(handle->call_);
      stalled.push_back({handle->call_, handle->kind_, reading});
    }
    if (stalled.empty()) continue;
    lock.unlock();
    const std::string write_message =
        absl::StrCat("stream: the client read no answer for ", stall_timeout_.count(),
                     " ms (--stream_stall_timeout_ms); the stream is ended");
    const std::string read_message =
        absl::StrCat("stream: the client sent no message for ", stall_timeout_.count(),
                     " ms (--stream_stall_timeout_ms); the stream is ended");
    for (auto [call, kind, reading] : stalled) {
      spdlog::warn("{}: the client {} for {} ms; ending the stream", KindName(kind),
                   reading ? "sent no message" : "read no answer", stall_timeout_.count());
      grpc_call_cancel_with_status(call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                                   (reading ? read_message : write_message).c_str(), nullptr);
      grpc_call_unref(call);
      stalled_[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
    }
    lock.lock();
  }
}

}  // namespace collide
