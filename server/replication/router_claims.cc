#include "server/replication/router_claims.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "server/infra/haproxy_runtime.h"
#include "spdlog/spdlog.h"

namespace collide {

RouterClaims::RouterClaims(RouterClaimsOptions options, Database* db,
                           const ReplicationControl* replication)
    : options_(std::move(options)), db_(db), replication_(replication) {}

RouterClaims::~RouterClaims() { Stop(); }

void RouterClaims::Start() { thread_ = std::thread(&RouterClaims::Run, this); }

void RouterClaims::Stop() {
  std::deque<PendingClaim> dropped;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  {
    MutexLock lock(&mu_);
    dropped.swap(claims_);
  }
  for (PendingClaim& claim : dropped) {
    if (claim.done) claim.done(absl::UnavailableError("router_admin: the server is stopping"));
  }
}

void RouterClaims::Claim(const std::string& scene, std::function<void(absl::Status)> done) {
  {
    MutexLock lock(&mu_);
    if (!stopping_) {
      claims_.push_back(PendingClaim{.scene = scene, .done = std::move(done)});
      done = nullptr;
    }
  }
  if (done) return done(absl::UnavailableError("router_admin: the server is stopping"));
  cv_.NotifyOne();
}

void RouterClaims::SyncSoon() {
  {
    MutexLock lock(&mu_);
    sync_soon_ = true;
  }
  cv_.NotifyOne();
}

absl::Status RouterClaims::SetEntry(const std::string& router, const std::string& scene) {
  const std::string set = absl::StrCat("set map ", options_.map, " ", scene, " ", options_.backend);
  absl::StatusOr<std::string> answer = HaproxyCommand(router, set, options_.timeout);
  if (!answer.ok()) return answer.status();
  if (answer->find("entry not found") == std::string::npos) {
    return HaproxyAnswerStatus(set, *answer);
  }
  const std::string add = absl::StrCat("add map ", options_.map, " ", scene, " ", options_.backend);
  answer = HaproxyCommand(router, add, options_.timeout);
  if (!answer.ok()) return answer.status();
  return HaproxyAnswerStatus(add, *answer);
}

std::vector<std::string> RouterClaims::Writable() const {
  std::vector<std::string> writable;
  for (const std::string& name : db_->SceneNames()) {
    if (db_->ReplicatedPosition(name).has_value() ||
        (replication_ != nullptr && replication_->SceneFigures(name).has_value())) {
      std::optional<SceneReplicaFigures> figures =
          replication_ != nullptr ? replication_->SceneFigures(name) : std::nullopt;
      if (figures.has_value() && figures->owner) writable.push_back(name);
      continue;
    }
    absl::StatusOr<std::shared_ptr<const Scene>> scene = db_->GetScene(name);
    if (scene.ok() && (*scene)->moved_to().empty()) writable.push_back(name);
  }
  return writable;
}

void RouterClaims::Sync() {
  const std::vector<std::string> writable = Writable();
  const std::set<std::string> mine(writable.begin(), writable.end());
  for (const std::string& router : options_.routers) {
    absl::StatusOr<std::string> answer =
        HaproxyCommand(router, absl::StrCat("show map ", options_.map), options_.timeout);
    if (!answer.ok()) {
      spdlog::warn("router: cannot read the map of {}: {}", router, answer.status().ToString());
      continue;
    }
    absl::flat_hash_map<std::string, std::string> entries;
    for (auto& [key, value] : ParseHaproxyMap(*answer)) entries[key] = value;
    for (const std::string& scene : mine) {
      auto it = entries.find(scene);
      if (it != entries.end() && it->second == options_.backend) continue;
      if (absl::Status status = SetEntry(router, scene); !status.ok()) {
        spdlog::warn("router: cannot point scene \"{}\" at {} on {}: {}", scene, options_.backend,
                     router, status.ToString());
      }
    }
    for (const auto& [scene, backend] : entries) {
      if (backend != options_.backend || mine.contains(scene)) continue;
      const std::string del = absl::StrCat("del map ", options_.map, " ", scene);
      absl::StatusOr<std::string> deleted = HaproxyCommand(router, del, options_.timeout);
      if (!deleted.ok()) break;
    }
  }
}

void RouterClaims::Run() {
  auto next_sync = std::chrono::steady_clock::now();
  while (true) {
    std::deque<PendingClaim> claims;
    bool sync = false;
    {
      std::unique_lock<Mutex> lock(mu_);
      const auto left = next_sync - std::chrono::steady_clock::now();
      if (left > std::chrono::steady_clock::duration::zero()) {
        cv_.WaitFor(lock, left, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return stopping_ || !claims_.empty() || sync_soon_;
        });
      }
      if (stopping_) return;
      claims.swap(claims_);
      sync = sync_soon_ || std::chrono::steady_clock::now() >= next_sync;
      sync_soon_ = false;
    }
    for (PendingClaim& claim : claims) {
      absl::Status first;
      for (const std::string& router : options_.routers) {
        absl::Status status = SetEntry(router, claim.scene);
        if (!status.ok()) {
          spdlog::warn("router: cannot point scene \"{}\" at {} on {}: {}", claim.scene,
                       options_.backend, router, status.ToString());
          if (first.ok()) first = status;
        }
      }
      if (claim.done) claim.done(first);
    }
    if (sync) {
      Sync();
      next_sync = std::chrono::steady_clock::now() + options_.interval;
    }
  }
}

}  // namespace collide
