// Interest streams over a real collide-server through the C++ client
// (client/cpp/interest_stream.h): full sets then deltas as bodies move (an observer riding a body
// that moves in the same batch, an observer of a body that does not exist yet), observers added,
// changed and removed on the open stream, every set against a brute force over the server's bodies
// after each of hundreds of random batches, the client reopening the stream after a server restart
// and resubscribing (full sets again), the end of the stream when the scene is deleted, and the
// limits: observers per stream, per server, streams, a million observers in one message.

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"
#include "watch/interest_oracle.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;

std::unique_ptr<ServerProcess> StartWithScene(std::vector<std::string> flags = {}) {
  ServerConfig config;
  config.extra_flags = std::move(flags);
  auto server = ServerProcess::Start(config);
  EXPECT_TRUE(IsOk(server));
  if (!server.ok()) return nullptr;
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  EXPECT_TRUE(IsOk((*server)->NewClient()->CreateScene("arena", options)));
  return *std::move(server);
}

v1::Observer Observer(uint64_t id, float enter, float leave, uint32_t max_relevant = 0) {
  v1::Observer o;
  o.set_id(id);
  o.set_enter_radius(enter);
  o.set_leave_radius(leave);
  o.set_max_relevant(max_relevant);
  return o;
}

v1::Observer Attached(uint64_t id, uint64_t host, float enter, float leave,
                      uint32_t max_relevant = 0) {
  v1::Observer o = Observer(id, enter, leave, max_relevant);
  o.set_attached_to(host);
  return o;
}

std::string Join(const std::set<uint64_t>* set) {
  if (set == nullptr) return "(none)";
  std::string out;
  for (uint64_t id : *set) out += std::to_string(id) + " ";
  return out;
}

// Applies `batch` and returns its version.
uint64_t Apply(client::UpdateWriter* writer, v1::UpdateBatch batch) {
  batch.set_scene("arena");
  auto ack = writer->Apply(batch);
  EXPECT_TRUE(IsOk(ack));
  EXPECT_FALSE(ack.ok() && ack->has_error()) << ack->error().message();
  return ack.ok() ? ack->version() : 0;
}

v1::UpdateBatch MoveTo(uint64_t id, float x, float y, float z) {
  v1::UpdateBatch batch;
  client::AddMove(id, MakePose(MakeVec3(x, y, z)), batch.mutable_moves());
  return batch;
}

// Reads until the stream has taken `messages` client messages into effect; every delta of the
// batches acknowledged before the last message was sent comes before that.
void Sync(client::InterestStream* stream, uint64_t messages) {
  while (true) {
    auto message = stream->Read();
    ASSERT_TRUE(IsOk(message));
    const uint64_t applied = message->has_snapshot() ? message->snapshot().requests_applied()
                                                     : message->update().requests_applied();
    if (applied >= messages) return;
  }
}

// Reads until the stream has applied `*messages` client messages and its sets are at `version`
// or later. Sets are evaluated away from the writer, so an acknowledged batch may not have been
// evaluated yet when the stream applies a client message (its answer is at the version reached
// then); an empty message is sent again until one is answered at `version` or later. Updates
// come in version order, so every delta up to `version` has been read by then.
void SyncTo(client::InterestStream* stream, uint64_t* messages, uint64_t version) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    ASSERT_TRUE(IsOk(stream->Upsert({})));
    ++*messages;
    while (true) {
      auto message = stream->Read();
      ASSERT_TRUE(IsOk(message));
      const bool snapshot = message->has_snapshot();
      const uint64_t applied =
          snapshot ? message->snapshot().requests_applied() : message->update().requests_applied();
      const uint64_t at = snapshot ? message->snapshot().version() : message->update().version();
      if (applied < *messages) continue;
      if (at >= version) return;
      break;
    }
  }
  FAIL() << "the stream's sets never reached version " << version;
}

TEST(Interest, StreamsFullSetsThenTheDeltasOfEachBatch) {
  auto server = StartWithScene();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  std::vector<v1::Body> bodies;
  for (uint64_t id = 1; id <= 6; ++id) {
    bodies.push_back(MakeBody(id, MakeSphere(0.5f), MakePose(MakeVec3(3.0f * id, 0, 0))));
  }
  ASSERT_TRUE(IsOk(client->UpsertBodies("arena", bodies)));
  // A fixed observer at the origin (the 2 nearest within 10), one riding body 1 (within 4), one
  // riding a body that does not exist yet.
  auto stream = client->OpenInterest(
      "arena", {Observer(10, 10, 12, 2), Attached(11, 1, 4, 4), Attached(12, 99, 100, 100)});
  ASSERT_TRUE(IsOk(stream));
  auto first = (*stream)->Read();
  ASSERT_TRUE(IsOk(first));
  ASSERT_TRUE(first->has_snapshot());
  EXPECT_FALSE(first->snapshot().resync());
  EXPECT_EQ(first->snapshot().requests_applied(), 1u);
  EXPECT_EQ(first->snapshot().sets_size(), 3);
  EXPECT_EQ(Join((*stream)->Set(10)), "1 2 ");
  EXPECT_EQ(Join((*stream)->Set(11)), "2 ");  // never its own host
  EXPECT_EQ(Join((*stream)->Set(12)), "");

  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  // Body 1 (observer 11's host) and body 5 move in the same batch: 5 to the origin.
  v1::UpdateBatch batch = MoveTo(1, 15, 1, 0);
  client::AddMove(5, MakePose(MakeVec3(0.5f, 0, 0)), batch.mutable_moves());
  const uint64_t version = Apply(writer->get(), batch);
  auto update = (*stream)->Read();
  ASSERT_TRUE(IsOk(update));
  ASSERT_TRUE(update->has_update());
  EXPECT_EQ(update->update().version(), version);
  EXPECT_EQ(Join((*stream)->Set(10)), "2 5 ");  // 5 at 0.5, 2 at 6: 1 left
  EXPECT_EQ(Join((*stream)->Set(11)), "4 6 ");  // at (15, 1, 0)
  // The host appears: observer 12 fills.
  Apply(writer->get(), [] {
    v1::UpdateBatch b;
    *b.add_ops()->mutable_upsert() = MakeBody(99, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
    return b;
  }());
  ASSERT_TRUE(IsOk((*stream)->Read()));
  EXPECT_EQ(Join((*stream)->Set(12)), "1 2 3 4 5 6 ");

  // Observers changed on the open stream: 10 narrowed, 13 added; 12 removed.
  ASSERT_TRUE(IsOk((*stream)->Upsert({Observer(10, 1, 1, 2), Observer(13, 7, 7)})));
  ASSERT_TRUE(IsOk((*stream)->Remove({12})));
  Sync(stream->get(), 3);
  EXPECT_EQ(Join((*stream)->Set(10)), "5 99 ");  // 99 at the origin, 5 at 0.5
  EXPECT_EQ(Join((*stream)->Set(13)), "2 5 99 ");
  EXPECT_EQ((*stream)->Set(12), nullptr);
  EXPECT_EQ((*stream)->reconnects(), 0u);

  // The scene's deletion ends the stream.
  ASSERT_TRUE(IsOk(client->DeleteScene("arena")));
  absl::StatusOr<v1::InterestResponse> end = (*stream)->Read();
  EXPECT_EQ(end.status().code(), absl::StatusCode::kNotFound) << end.status();
}

TEST(Interest, EverySetEqualsABruteForceOverTheServersBodiesAfterEachBatch) {
  auto server = StartWithScene();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-20, 20);
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  {
    v1::UpdateBatch batch;
    for (uint64_t id = 1; id <= 150; ++id) {
      v1::Body body = MakeBody(id, MakeSphere(0.5f), MakePose(MakeVec3(u(rng), u(rng), u(rng))));
      body.set_category(1u << (id % 3));
      *batch.add_ops()->mutable_upsert() = body;
    }
    Apply(writer->get(), batch);
  }
  // Observers of every kind: fixed and attached, with and without cones and filters.
  std::vector<v1::Observer> observers;
  for (uint64_t id = 1; id <= 24; ++id) {
    v1::Observer o = Observer(id, 5 + id % 7, 7 + id % 7, 1 + static_cast<uint32_t>(id % 9));
    if (id % 2 == 0) {
      o.set_attached_to(id * 5);
    } else {
      *o.mutable_pose() = MakePose(MakeVec3(u(rng), u(rng), u(rng)));
    }
    if (id % 3 == 0) {
      o.mutable_cone()->mutable_direction()->set_x(1);
      o.mutable_cone()->set_half_angle(1.2f);
      o.mutable_cone()->set_leave_half_angle(1.4f);
    }
    if (id % 4 == 0) o.mutable_filter()->set_mask(1 | 2);
    observers.push_back(o);
  }
  auto stream = client->OpenInterest("arena", observers);
  ASSERT_TRUE(IsOk(stream));
  uint64_t messages = 1;
  Sync(stream->get(), messages);
  // The oracle's own sets, from the same starting state.
  testing::InterestOracle oracle;
  auto bodies_now = [&] {
    auto got = client->GetBodies("arena");
    EXPECT_TRUE(IsOk(got));
    std::vector<BodyState> out;
    for (const v1::Body& b : got->bodies()) {
      BodyState s;
      s.id = b.id();
      s.pose.position =
          Vec3{b.pose().position().x(), b.pose().position().y(), b.pose().position().z()};
      s.pose.rotation = Quat{b.pose().rotation().x(), b.pose().rotation().y(),
                             b.pose().rotation().z(), b.pose().rotation().w()};
      if (!b.pose().has_rotation()) s.pose.rotation = Quat::Identity();
      s.category = b.category();
      s.mask = b.has_mask() ? b.mask() : ~0u;
      out.push_back(s);
    }
    return out;
  };
  {
    std::vector<InterestSet::Change> changes;
    for (const v1::Observer& o : observers) {
      ObserverSpec spec;
      spec.id = o.id();
      if (o.has_attached_to()) spec.attached_to = o.attached_to();
      spec.pose.position =
          Vec3{o.pose().position().x(), o.pose().position().y(), o.pose().position().z()};
      spec.enter_radius = o.enter_radius();
      spec.leave_radius = o.leave_radius();
      if (o.has_cone()) {
        spec.cone = ViewCone{.direction = {1, 0, 0},
                             .half_angle = o.cone().half_angle(),
                             .leave_half_angle = o.cone().leave_half_angle()};
      }
      if (o.filter().has_mask()) spec.mask = o.filter().mask();
      spec.max_relevant = o.max_relevant();
      changes.push_back({.id = spec.id, .spec = spec});
    }
    oracle.ApplyChanges(changes, bodies_now());
  }
  int applied = 0, changed = 0;
  size_t held = 0;
  std::map<uint64_t, std::vector<uint64_t>> last = oracle.sets();
  std::set<uint64_t> live;
  for (uint64_t id = 1; id <= 150; ++id) live.insert(id);
  for (int step = 0; step < 300; ++step) {
    v1::UpdateBatch batch;
    std::set<uint64_t> used;
    for (int k = 0; k < 20; ++k) {
      const uint64_t id = 1 + rng() % 160;
      if (!used.insert(id).second) continue;
      const int roll = static_cast<int>(rng() % 10);
      if (!live.contains(id)) {
        // Created (again).
        *batch.add_ops()->mutable_upsert() =
            MakeBody(id, MakeSphere(0.5f), MakePose(MakeVec3(u(rng), u(rng), u(rng))));
        live.insert(id);
      } else if (roll == 0) {
        batch.add_ops()->set_remove(id);
        live.erase(id);
      } else if (roll == 1) {
        v1::SetFilter* f = batch.add_ops()->mutable_set_filter();
        f->set_id(id);
        f->set_category(1u << (rng() % 3));
        f->set_mask(~0u);
      } else {
        v1::SetPose* p = batch.add_ops()->mutable_set_pose();
        p->set_id(id);
        *p->mutable_pose() = MakePose(MakeVec3(u(rng), u(rng), u(rng)));
      }
    }
    batch.set_scene("arena");
    auto ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack));
    ASSERT_FALSE(ack->has_error()) << ack->error().message();
    ++applied;
    oracle.Evaluate(bodies_now());
    SyncTo(stream->get(), &messages, ack->version());
    if (::testing::Test::HasFatalFailure()) return;
    if (oracle.sets() != last) ++changed;
    last = oracle.sets();
    for (const auto& [id, want] : oracle.sets()) {
      held += want.size();
      const std::set<uint64_t>* got = (*stream)->Set(id);
      ASSERT_NE(got, nullptr) << "observer " << id << " step " << step;
      EXPECT_EQ(std::vector<uint64_t>(got->begin(), got->end()), want)
          << "observer " << id << " step " << step;
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(applied, 300);
  // The sets were far from empty and changed with most batches.
  EXPECT_GT(changed, 200);
  EXPECT_GT(held, 300u * 24u);
}

TEST(Interest, TheClientResubscribesAfterARestartAndGetsFullSets) {
  ServerConfig config;
  auto started = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(started));
  std::unique_ptr<ServerProcess> server = *std::move(started);
  std::unique_ptr<client::Client> client = server->NewClient();
  ASSERT_TRUE(IsOk(client->CreateScene("arena")));  // durable: it survives the restart
  const std::vector<v1::Body> bodies = {MakeBody(1, MakeSphere(1), MakePose(MakeVec3(1, 0, 0))),
                                        MakeBody(2, MakeSphere(1), MakePose(MakeVec3(50, 0, 0)))};
  ASSERT_TRUE(IsOk(client->UpsertBodies("arena", bodies)));
  auto stream = client->OpenInterest("arena", {Observer(7, 5, 5)},
                                     client::InterestOptions{.give_up_after = absl::Seconds(20)});
  ASSERT_TRUE(IsOk(stream));
  ASSERT_TRUE(IsOk((*stream)->Read()));
  EXPECT_EQ(Join((*stream)->Set(7)), "1 ");
  // Declared while the server is up; then it goes away and comes back on the same port.
  ASSERT_TRUE(IsOk((*stream)->Upsert({Observer(8, 100, 100)})));
  Sync(stream->get(), 2);
  ASSERT_TRUE(IsOk(server->Stop(SIGKILL)));
  ASSERT_TRUE(IsOk(server->RestartOnSamePort()));
  auto resubscribed = (*stream)->Read();
  ASSERT_TRUE(IsOk(resubscribed));
  ASSERT_TRUE(resubscribed->has_snapshot());  // a new stream's full sets
  EXPECT_EQ(resubscribed->snapshot().requests_applied(), 1u);
  EXPECT_EQ(resubscribed->snapshot().sets_size(), 2);
  EXPECT_EQ(Join((*stream)->Set(7)), "1 ");
  EXPECT_EQ(Join((*stream)->Set(8)), "1 2 ");
  EXPECT_GE((*stream)->reconnects(), 1u);
}

TEST(Interest, LimitsEndTheStreamWithTheirFlagsAndTheServerStaysWithinThem) {
  auto server = StartWithScene({"--max_observers_per_stream=4", "--max_interest_observers=6",
                                "--max_interest_streams=2", "--max_relevant_per_observer=8"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  client::InterestOptions once{.reconnect = false};
  auto read_status = [](client::InterestStream* s) { return s->Read().status(); };
  // Five observers in one stream: more than --max_observers_per_stream.
  {
    std::vector<v1::Observer> five;
    for (uint64_t id = 1; id <= 5; ++id) five.push_back(Observer(id, 1, 1));
    auto s = client->OpenInterest("arena", five, once);
    ASSERT_TRUE(IsOk(s));
    const absl::Status status = read_status(s->get());
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "messages[0].observers")) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "--max_observers_per_stream")) << status;
  }
  // Four, then four more on a second stream: more than --max_interest_observers.
  std::vector<v1::Observer> four;
  for (uint64_t id = 1; id <= 4; ++id) four.push_back(Observer(id, 1, 1));
  auto a = client->OpenInterest("arena", four, once);
  ASSERT_TRUE(IsOk(a));
  ASSERT_TRUE(IsOk((*a)->Read()));
  {
    auto b = client->OpenInterest("arena", four, once);
    ASSERT_TRUE(IsOk(b));
    const absl::Status status = read_status(b->get());
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "--max_interest_observers")) << status;
  }
  // A third stream while two are open: --max_interest_streams.
  auto c = client->OpenInterest("arena", {Observer(1, 1, 1)}, once);
  ASSERT_TRUE(IsOk(c));
  ASSERT_TRUE(IsOk((*c)->Read()));
  {
    auto d = client->OpenInterest("arena", {Observer(1, 1, 1)}, once);
    ASSERT_TRUE(IsOk(d));
    const absl::Status status = read_status(d->get());
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "--max_interest_streams")) << status;
  }
  // max_relevant over --max_relevant_per_observer, on the open stream.
  ASSERT_TRUE(IsOk((*c)->Upsert({Observer(2, 1, 1, 9)})));
  {
    const absl::Status status = read_status(c->get());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "messages[1].observers[0].max_relevant"))
        << status;
  }
  // The stats count what is held: stream a's 4 observers.
  absl::SleepFor(absl::Milliseconds(100));
  auto stats = client->GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_EQ(stats->interest_streams(), 1u);
  EXPECT_EQ(stats->interest_observers(), 4u);
}

TEST(Interest, AMillionObserversInOneMessageAreRefusedWithoutBloatingTheServer) {
  auto server = StartWithScene();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  std::vector<v1::Observer> many(1000000);
  for (size_t i = 0; i < many.size(); ++i) many[i].set_id(i + 1);
  auto stream = client->OpenInterest("arena", std::move(many), {.reconnect = false});
  ASSERT_TRUE(IsOk(stream));
  const absl::Status status = (*stream)->Read().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "observers")) << status;
  // The server answers, and holds no observer.
  auto stats = client->GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_EQ(stats->interest_observers(), 0u);
  EXPECT_LT(server->RssBytes(), uint64_t{512} << 20);
}

}  // namespace
}  // namespace collide::integration
