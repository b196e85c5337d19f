#pragma once

// collide-load's drivers: the Recorder that measures latencies and work, and the drivers that
// send a workload's calls (UnaryDriver) and stream batches (StreamDriver) in a closed or an open
// loop (paced at intended send times).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/load/latency_histogram.h"
#include "bench/load/workload.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"

namespace collide::load {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Measurement shared by the drivers.

/// Latencies (from each call's intended send time) and units of work, counted between Begin and
/// End; thread-safe.
class Recorder {
 public:
  void Record(Clock::time_point intended, Clock::time_point done, uint64_t units) {
    if (!measuring_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(mu_);
    histogram_.Record(
        std::chrono::duration_cast<std::chrono::nanoseconds>(done - intended).count());
    units_ += units;
  }
  void Begin() {
    std::lock_guard<std::mutex> lock(mu_);
    histogram_.Clear();
    units_ = 0;
    measuring_ = true;
  }
  // Stops measuring and returns what was measured since Begin.
  std::pair<bench::LatencyHistogram, uint64_t> End() {
    std::lock_guard<std::mutex> lock(mu_);
    measuring_ = false;
    return {histogram_, units_};
  }

 private:
  std::atomic<bool> measuring_{false};
  std::mutex mu_;
  bench::LatencyHistogram histogram_;
  uint64_t units_ = 0;
};

/// Sleeps until `t`. No spinning: on a 2-core machine a spinning pacer takes a core from the
/// server. Timer slack makes a send late by tens of microseconds, which the latency (measured
/// from the intended time) includes; a late pacer catches up by sending at once.
inline void SleepUntil(Clock::time_point t) {
  if (Clock::now() < t) std::this_thread::sleep_until(t);
}

// ---------------------------------------------------------------------------------------------
// Unary calls.

/// Raycast, SphereCast and Overlap calls of a workload (kinds cycled by its mix) on `Stub`'s
/// callback API, in a closed or an open loop.
template <typename Stub>
class UnaryDriver {
 public:
  UnaryDriver(Stub* stub, const Workload& w, const std::vector<Kind>& mix, std::string token,
              Recorder* recorder)
      : stub_(stub), w_(w), mix_(mix), token_(std::move(token)), recorder_(recorder) {}

  // Closed loop: `concurrency` calls, each issuing the next when it completes, until Stop.
  void StartClosed(int concurrency) {
    for (int i = 0; i < concurrency; ++i) Issue(Clock::now(), true);
  }
  // Open loop: calls at `rate` per second from now until `stop` (this thread paces).
  void RunOpen(double rate, const std::atomic<bool>& stop) {
    const Clock::time_point t0 = Clock::now();
    for (uint64_t i = 0; !stop.load(); ++i) {
      const Clock::time_point t =
          t0 + std::chrono::nanoseconds(static_cast<int64_t>(1e9 * static_cast<double>(i) / rate));
      SleepUntil(t);
      Issue(t, false);
    }
  }
  void Stop() { stop_ = true; }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return outstanding_ == 0; });
  }
  uint64_t errors() const { return errors_; }

 private:
  struct Call {
    grpc::ClientContext context;
    v1::RaycastRequest ray;
    v1::SphereCastRequest sphere;
    v1::OverlapRequest overlap;
    v1::QueryResponse response;
    Clock::time_point intended;
    bool closed = false;
  };

  void Issue(Clock::time_point intended, bool closed) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++outstanding_;
    }
    auto* call = new Call;
    call->intended = intended;
    call->closed = closed;
    if (!token_.empty()) call->context.AddMetadata("authorization", "Bearer " + token_);
    // As the clients do, so that a router in front of shards sends the call to the scene's.
    call->context.AddMetadata("x-collide-scene", w_.scene);
    const uint64_t n = next_.fetch_add(1, std::memory_order_relaxed);
    const v1::Query& q = w_.queries[n % w_.queries.size()];
    auto done = [this, call](grpc::Status status) { Done(call, status); };
    switch (mix_[n % mix_.size()]) {
      case Kind::kRay:
        call->ray.set_scene(w_.scene);
        *call->ray.mutable_ray() = q.raycast();
        stub_->async()->Raycast(&call->context, &call->ray, &call->response, done);
        break;
      case Kind::kSphere:
        call->sphere.set_scene(w_.scene);
        *call->sphere.mutable_cast() = MakeQuery(0, Kind::kSphere, RayOf(q)).sphere_cast();
        stub_->async()->SphereCast(&call->context, &call->sphere, &call->response, done);
        break;
      case Kind::kOverlap:
        call->overlap.set_scene(w_.scene);
        *call->overlap.mutable_overlap() = MakeQuery(0, Kind::kOverlap, RayOf(q)).overlap();
        stub_->async()->Overlap(&call->context, &call->overlap, &call->response, done);
        break;
    }
  }
  static Ray RayOf(const v1::Query& q) {
    const v1::Raycast& r = q.raycast();
    return Ray{{r.origin().x(), r.origin().y(), r.origin().z()},
               {r.direction().x(), r.direction().y(), r.direction().z()},
               r.max_distance()};
  }
  void Done(Call* call, const grpc::Status& status) {
    const Clock::time_point now = Clock::now();
    if (status.ok()) {
      recorder_->Record(call->intended, now, 1);
    } else if (errors_.fetch_add(1) == 0) {
      std::fprintf(stderr, "call failed: %s\n", status.error_message().c_str());
    }
    const bool again = call->closed && !stop_.load();
    delete call;
    if (again) Issue(Clock::now(), true);
    std::lock_guard<std::mutex> lock(mu_);
    if (--outstanding_ == 0) cv_.notify_all();
  }

  Stub* const stub_;
  const Workload& w_;
  const std::vector<Kind>& mix_;
  const std::string token_;
  Recorder* const recorder_;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> errors_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  int outstanding_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Streams: one bidi stream, batches pipelined (at most `in_flight` outstanding, closed loop) or
// queued at intended times by a pacer (open loop). One write and one read outstanding at a
// time, as the callback API allows; answers come back in order, so each is matched with the
// oldest unanswered send.

/// One bidi stream of a workload's batches (QueryStream or UpdateStream), closed or open loop.
template <typename Request, typename Response>
class StreamDriver final : public grpc::ClientBidiReactor<Request, Response> {
 public:
  // `units` counts an answer's work (results or moves).
  StreamDriver(const std::vector<Request>& batches, int in_flight, bool open,
               std::function<uint64_t(const Request&, const Response&)> units, Recorder* recorder)
      : batches_(batches),
        in_flight_(in_flight),
        open_(open),
        units_(std::move(units)),
        recorder_(recorder) {}

  // Starts the call; `start` is the stub's async method bound to the context.
  void Start(const std::string& token,
             const std::function<void(grpc::ClientContext*, StreamDriver*)>& start) {
    if (!token.empty()) context_.AddMetadata("authorization", "Bearer " + token);
    // Every batch of a workload names the same scene: the header a router routes by.
    if (!batches_.empty() && !batches_.front().scene().empty()) {
      context_.AddMetadata("x-collide-scene", batches_.front().scene());
    }
    start(&context_, this);
    this->StartRead(&response_);
    this->StartCall();
    Pump();
  }
  // Open loop: one batch due at `intended`.
  void Enqueue(Clock::time_point intended) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      due_.push_back(intended);
    }
    Pump();
  }
  // No more sends; the stream half-closes once every batch is answered.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    Pump();
  }
  // Waits for the end of the call; its status.
  grpc::Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    return status_;
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok) stop_ = true;
    }
    Pump();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the call is ending; OnDone follows
    const Clock::time_point now = Clock::now();
    Clock::time_point intended;
    const Request* sent;
    {
      std::lock_guard<std::mutex> lock(mu_);
      intended = sent_.front().first;
      sent = sent_.front().second;
      sent_.pop_front();
    }
    recorder_->Record(intended, now, units_(*sent, response_));
    this->StartRead(&response_);
    Pump();
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }

 private:
  // Starts whatever may start now: the next write, or the half-close once all is answered.
  void Pump() {
    const Request* write = nullptr;
    bool writes_done = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (writing_ || closed_) return;
      if (stop_) {
        if (sent_.empty()) {
          closed_ = true;
          writes_done = true;
        }
      } else if (open_ ? !due_.empty() : sent_.size() < static_cast<size_t>(in_flight_)) {
        Clock::time_point intended = Clock::now();
        if (open_) {
          intended = due_.front();
          due_.pop_front();
        }
        write = &batches_[next_++ % batches_.size()];
        sent_.emplace_back(intended, write);
        writing_ = true;
      }
    }
    if (write != nullptr) this->StartWrite(write);
    if (writes_done) this->StartWritesDone();
  }

  const std::vector<Request>& batches_;
  const int in_flight_;
  const bool open_;
  const std::function<uint64_t(const Request&, const Response&)> units_;
  Recorder* const recorder_;
  grpc::ClientContext context_;
  Response response_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Clock::time_point> due_;
  std::deque<std::pair<Clock::time_point, const Request*>> sent_;
  size_t next_ = 0;
  bool writing_ = false;
  bool stop_ = false;
  bool closed_ = false;
  bool done_ = false;
  grpc::Status status_;
};

/// Sends `rate` batches/s in all, round robin over `drivers`, until `stop`.
template <typename Driver>
void PaceStreams(const std::vector<std::unique_ptr<Driver>>& drivers, double rate,
                 const std::atomic<bool>& stop) {
  const Clock::time_point t0 = Clock::now();
  for (uint64_t i = 0; !stop.load(); ++i) {
    const Clock::time_point t =
        t0 + std::chrono::nanoseconds(static_cast<int64_t>(1e9 * static_cast<double>(i) / rate));
    SleepUntil(t);
    drivers[i % drivers.size()]->Enqueue(t);
  }
}

}  // namespace collide::load
