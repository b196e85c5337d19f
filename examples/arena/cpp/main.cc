// collide-arena: an authoritative game-server tick loop against a collide server.
//
// At --hz ticks per second (60 by default) for --ticks ticks, the loop moves --bodies bodies and
// sends all their poses as one update batch through a ResilientUpdateWriter (which survives a
// server restart), and sends --rays hitscan ray casts and --casts sphere casts as one QueryBatch
// on a QueryStream. The queries ask for the version that holds the tick's poses (min_version),
// so they see this tick's world. A tick's round trip is the time from sending both until the
// ack and the answers are back. It prints a line every second and, at the end, the round trip's
// p50 / p99 / max.
//
// The first --players bodies are players. Each gets an observer on one interest stream (enter
// radius --interest_radius, leave radius 1.15 times that, at most --interest_max bodies), and so
// receives only its relevant set: the loop prints how many bytes of body state a tick that saves
// against sending every body to every player (--players=0: no interest stream).
//
// With --level the arena gets a level (level.h): a terrain of hills (a heightfield asset) and 16
// box buildings (a mesh asset), uploaded at start. The bodies stand on the terrain and turn back
// at the buildings' walls; each hitscan ray is an aimed shot from a shooter's eye at another
// body (the line of sight between them), and a shot whose closest hit is the terrain or a
// building was blocked by the level. Sphere casts count their hits up to the first wall. The
// loop prints how many shots the level blocked. Without --level (the default) the workload is
// the flat arena of the tick-loop benchmark (docs/PERFORMANCE.md), unchanged.
//
//   collide-arena --address=127.0.0.1:50051 --ticks=600 --bodies=1000 --rays=100 --casts=10
//   collide-arena --address=127.0.0.1:50051 --level

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/program_flags.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_runtime.h"
#include "client/cpp/grpc_status.h"
#include "client/cpp/interest_stream.h"
#include "client/cpp/resilient_update_writer.h"
#include "collide/version.h"
#include "examples/arena/cpp/level.h"
#include "google/protobuf/arena.h"

ABSL_FLAG(std::string, address, "127.0.0.1:50051", "the collide server, host:port");
ABSL_FLAG(std::string, scene, "arena-example",
          "the scene to create (it must not exist); deleted at exit");
ABSL_FLAG(int, ticks, 600, "ticks to run");
ABSL_FLAG(int, hz, 60, "ticks per second");
ABSL_FLAG(int, bodies, 1000, "moving bodies, every pose sent every tick");
ABSL_FLAG(int, rays, 100, "hitscan ray casts per tick");
ABSL_FLAG(int, casts, 10, "sphere casts per tick");
ABSL_FLAG(std::string, durability, "periodic",
          "the scene's durability: none, periodic or always (an fsync per tick)");
ABSL_FLAG(std::string, token, "", "bearer token, when the server requires one");
ABSL_FLAG(std::string, tls_ca, "", "PEM file of the CA that signed the server's certificate");
ABSL_FLAG(uint32_t, seed, 7, "seed of the bodies' starting positions and the shots");
ABSL_FLAG(int, players, 100,
          "players among the bodies, each with an observer of its relevant bodies (0: none)");
ABSL_FLAG(float, interest_radius, 30, "a player's interest radius (leave radius: 1.15 times it)");
ABSL_FLAG(uint32_t, interest_max, 64, "at most this many relevant bodies per player, the nearest");
ABSL_FLAG(bool, level, false,
          "a level: terrain (a heightfield) and buildings (a mesh) that bodies stand on and walk "
          "round and that shots stop at (off: the flat arena of the tick-loop benchmark)");

namespace collide::arena {
namespace {

using Clock = std::chrono::steady_clock;

// The play field: bodies move inside [-kHalfSide, kHalfSide] on x and z.
constexpr float kHalfSide = 100.0f;
constexpr int kWalls = 8;

struct Config {
  std::string address;
  std::string scene;
  int ticks;
  int hz;
  int bodies;
  int rays;
  int casts;
  v1::Durability durability;
  std::string token;
  std::string tls_ca;
  uint32_t seed;
  int players;
  float interest_radius;
  uint32_t interest_max;
  bool level;
};

// The state a game server sends a player per body per tick: id, position, rotation.
constexpr size_t kBodyStateBytes = sizeof(uint64_t) + 7 * sizeof(float);

// Reads the interest stream on its own thread: the players' relevant bodies, summed over every
// player, as of the last message, and the bytes of the stream's messages.
class InterestReader {
 public:
  explicit InterestReader(std::unique_ptr<client::InterestStream> stream)
      : stream_(std::move(stream)), thread_([this] { Run(); }) {}
  ~InterestReader() {
    stream_->Cancel();
    thread_.join();
  }
  uint64_t relevant() const { return relevant_.load(); }
  uint64_t stream_bytes() const { return stream_bytes_.load(); }
  uint64_t messages() const { return messages_.load(); }

 private:
  void Run() {
    for (;;) {
      absl::StatusOr<v1::InterestResponse> message = stream_->Read();
      if (!message.ok()) return;
      uint64_t total = 0;
      for (const auto& [id, set] : stream_->sets()) total += set.size();
      relevant_.store(total);
      stream_bytes_.fetch_add(message->ByteSizeLong());
      messages_.fetch_add(1);
    }
  }
  const std::unique_ptr<client::InterestStream> stream_;
  std::atomic<uint64_t> relevant_{0}, stream_bytes_{0}, messages_{0};
  std::thread thread_;
};

// Players' observers: riding bodies 1..players.
std::vector<v1::Observer> PlayerObservers(const Config& config) {
  std::vector<v1::Observer> observers;
  for (int p = 0; p < config.players; ++p) {
    v1::Observer observer;
    observer.set_id(static_cast<uint64_t>(p) + 1);
    observer.set_attached_to(static_cast<uint64_t>(p) + 1);
    observer.set_enter_radius(config.interest_radius);
    observer.set_leave_radius(config.interest_radius * 1.15f);
    observer.set_max_relevant(config.interest_max);
    observers.push_back(std::move(observer));
  }
  return observers;
}

// How far a body's centre keeps from a building's wall (a box's half-diagonal and a little).
constexpr float kClearance = 1.5f;
// A body's centre above the ground, and a shooter's eye above its centre.
constexpr float kStandHeight = 1.0f;
constexpr float kEyeAboveCentre = 0.6f;

// The simulation the game server owns: positions, velocities and headings of its bodies, on the
// level when there is one (null: a flat floor).
struct World {
  const Level* level;
  std::vector<float> x, y, z, vx, vz;

  World(int n, std::mt19937& rng, const Level* level_or_null)
      : level(level_or_null), x(n), y(n, kStandHeight), z(n), vx(n), vz(n) {
    std::uniform_real_distribution<float> at(-kHalfSide, kHalfSide);
    std::uniform_real_distribution<float> speed(-8.0f, 8.0f);
    for (int i = 0; i < n; ++i) {
      x[i] = at(rng);
      z[i] = at(rng);
      while (level != nullptr && InsideBuilding(*level, x[i], z[i], kClearance)) {
        x[i] = at(rng);
        z[i] = at(rng);
      }
      vx[i] = speed(rng);
      vz[i] = speed(rng);
      Stand(i);
    }
  }

  // Moves every body by dt seconds, bouncing off the field's edges (and the buildings' walls).
  void Step(float dt) {
    for (size_t i = 0; i < x.size(); ++i) {
      const float next_x = x[i] + vx[i] * dt, next_z = z[i] + vz[i] * dt;
      if (level != nullptr && InsideBuilding(*level, next_x, z[i], kClearance)) {
        vx[i] = -vx[i];
      } else {
        x[i] = next_x;
      }
      if (level != nullptr && InsideBuilding(*level, x[i], next_z, kClearance)) {
        vz[i] = -vz[i];
      } else {
        z[i] = next_z;
      }
      if (std::abs(x[i]) > kHalfSide) vx[i] = -vx[i];
      if (std::abs(z[i]) > kHalfSide) vz[i] = -vz[i];
      Stand(i);
    }
  }

  // Body i on the ground where it is.
  void Stand(size_t i) {
    if (level != nullptr) y[i] = GroundHeight(*level, x[i], z[i]) + kStandHeight;
  }

  // Body i's id (ids 1..n; the walls come after).
  static uint64_t Id(size_t i) { return i + 1; }

  // Every pose in column form; each body faces where it goes (a rotation about y).
  void AppendPoses(v1::PoseColumns* moves) const {
    moves->mutable_ids()->Reserve(static_cast<int>(x.size()));
    moves->mutable_poses()->Reserve(static_cast<int>(7 * x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      float half = 0.5f * std::atan2(vx[i], vz[i]);
      moves->add_ids(Id(i));
      for (float value : {x[i], y[i], z[i], 0.0f, std::sin(half), 0.0f, std::cos(half)}) {
        moves->add_poses(value);
      }
    }
  }
};

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// The level's bodies come after the walls.
uint64_t TerrainId(const World& world) { return world.x.size() + 1 + kWalls; }
uint64_t BuildingsId(const World& world) { return world.x.size() + 2 + kWalls; }

// Capsule players (upright), a few boxes for cover, and static walls around the field; with a
// level, its terrain and buildings (uploaded first) and walls from below the ground.
absl::Status CreateScene(client::Client& client, const Config& config, const World& world) {
  v1::SceneOptions options;
  options.set_durability(config.durability);
  options.set_max_bodies(static_cast<uint32_t>(config.bodies + kWalls + 16));
  absl::StatusOr<v1::SceneInfo> created = client.CreateScene(config.scene, options);
  if (!created.ok()) return created.status();
  std::vector<v1::Body> bodies;
  for (size_t i = 0; i < world.x.size(); ++i) {
    v1::Shape shape =
        i % 10 == 0 ? client::MakeBox(1.0f, 1.0f, 1.0f) : client::MakeCapsule(0.4f, 0.5f);
    bodies.push_back(
        client::MakeBody(World::Id(i), shape,
                         client::MakePose(client::MakeVec3(world.x[i], world.y[i], world.z[i]))));
  }
  // Flat: 4 high from the floor. On the level: from its bottom to 4 above its highest ground.
  float wall_y = 2, wall_half_y = 2;
  if (world.level != nullptr) {
    const Level& level = *world.level;
    const float top = *std::max_element(level.heights.begin(), level.heights.end()) + 4;
    wall_y = 0.5f * (level.bottom + top);
    wall_half_y = 0.5f * (top - level.bottom);
    if (absl::Status uploaded =
            UploadLevel(client, config.scene, level, TerrainId(world), BuildingsId(world));
        !uploaded.ok()) {
      return uploaded;
    }
  }
  const float wall = kHalfSide + 5;
  for (int w = 0; w < kWalls; ++w) {
    float along = (w % 2 == 0 ? -0.5f : 0.5f) * wall;
    bool on_x = w < 4;
    float side = (w / 2) % 2 == 0 ? -wall : wall;
    v1::Vec3 position =
        on_x ? client::MakeVec3(along, wall_y, side) : client::MakeVec3(side, wall_y, along);
    v1::Shape shape = on_x ? client::MakeBox(wall / 2, wall_half_y, 1)
                           : client::MakeBox(1, wall_half_y, wall / 2);
    bodies.push_back(
        client::MakeStaticBody(world.x.size() + 1 + w, shape, client::MakePose(position)));
  }
  return client.UpsertBodies(config.scene, bodies).status();
}

// The tick's shots: hitscan rays from random shooters in random horizontal directions (the
// shooter excluded), and a few sphere casts (grenades, projectiles). On a level each hitscan ray
// is aimed from the shooter's eye at another body's centre instead.
v1::QueryBatch Shots(const Config& config, const World& world, std::mt19937& rng) {
  v1::QueryBatch batch;
  batch.set_scene(config.scene);
  std::uniform_int_distribution<size_t> shooter(0, world.x.size() - 1);
  std::uniform_real_distribution<float> angle(0, 6.2831853f);
  uint64_t request_id = 1;
  for (int r = 0; r < config.rays + config.casts; ++r) {
    size_t i = shooter(rng);
    if (world.level != nullptr && r < config.rays) {
      // Another body (the next one when the draw names the shooter).
      size_t target = shooter(rng);
      if (target == i) target = (i + 1) % world.x.size();
      *batch.add_queries() =
          AimedShot(request_id++, World::Id(i),
                    client::MakeVec3(world.x[i], world.y[i] + kEyeAboveCentre, world.z[i]),
                    client::MakeVec3(world.x[target], world.y[target], world.z[target]));
      continue;
    }
    float a = angle(rng);
    // Flat: 1.5 above the floor, as ever. On a level: at eye height.
    v1::Vec3 origin = client::MakeVec3(
        world.x[i], world.level != nullptr ? world.y[i] + kEyeAboveCentre : 1.5f, world.z[i]);
    v1::Vec3 direction = client::MakeVec3(std::sin(a), 0, std::cos(a));
    v1::Query query;
    if (r < config.rays) {
      query = client::MakeRaycastQuery(request_id++, client::MakeRaycast(origin, direction, 150));
    } else {
      query = client::MakeSphereCastQuery(
          request_id++, client::MakeSphereCast(origin, direction, 40, 0.5f), v1::MODE_ALL, 16);
    }
    uint64_t self = World::Id(i);
    *query.mutable_filter() = client::MakeFilter(~0u, ~0u, {&self, 1});
    *batch.add_queries() = std::move(query);
  }
  return batch;
}

int Run(const Config& config) {
  client::ClientOptions options;
  options.address = config.address;
  options.bearer_token = config.token;
  if (!config.tls_ca.empty()) {
    absl::StatusOr<std::string> ca = client::ReadTextFile(config.tls_ca);
    if (!ca.ok()) {
      std::fprintf(stderr, "collide-arena: %s\n", ca.status().ToString().c_str());
      return 1;
    }
    options.tls_root_cert_pem = *ca;
  }
  absl::StatusOr<std::unique_ptr<client::Client>> connected = client::Client::Connect(options);
  if (!connected.ok()) {
    std::fprintf(stderr, "collide-arena: %s\n", connected.status().ToString().c_str());
    return 1;
  }
  client::Client& client = **connected;
  std::mt19937 rng(config.seed);
  Level level;
  if (config.level) level = MakeLevel(kHalfSide);
  World world(config.bodies, rng, config.level ? &level : nullptr);
  if (absl::Status created = CreateScene(client, config, world); !created.ok()) {
    std::fprintf(stderr, "collide-arena: creating scene %s: %s\n", config.scene.c_str(),
                 created.ToString().c_str());
    return 1;
  }
  absl::StatusOr<v1::SceneInfo> info = client.GetScene(config.scene);
  absl::StatusOr<std::unique_ptr<client::ResilientUpdateWriter>> writer =
      client::ResilientUpdateWriter::Open(&client, config.scene);
  absl::StatusOr<std::unique_ptr<client::QueryStreamSession>> queries =
      client.OpenQueryStream(config.scene);
  if (!info.ok() || !writer.ok() || !queries.ok()) {
    std::fprintf(stderr, "collide-arena: %s\n",
                 (!info.ok()     ? info.status()
                  : !writer.ok() ? writer.status()
                                 : queries.status())
                     .ToString()
                     .c_str());
    return 1;
  }
  std::unique_ptr<InterestReader> interest;
  if (config.players > 0) {
    absl::StatusOr<std::unique_ptr<client::InterestStream>> stream =
        client.OpenInterest(config.scene, PlayerObservers(config));
    if (!stream.ok()) {
      std::fprintf(stderr, "collide-arena: interest: %s\n", stream.status().ToString().c_str());
      return 1;
    }
    interest = std::make_unique<InterestReader>(*std::move(stream));
  }
  std::printf(
      "collide-arena: scene %s, %d bodies, %d rays + %d sphere casts per tick, %d Hz, "
      "%d ticks, %d players\n",
      config.scene.c_str(), config.bodies, config.rays, config.casts, config.hz, config.ticks,
      config.players);
  if (config.level) {
    std::printf(
        "level: terrain %u x %u samples %g m apart (heightfield \"%s\", body %llu), %zu "
        "buildings (mesh \"%s\", %zu triangles, body %llu)\n",
        level.rows, level.columns, level.spacing, kTerrainAsset,
        static_cast<unsigned long long>(TerrainId(world)), level.buildings.size(), kBuildingsAsset,
        level.buildings.size() * 12, static_cast<unsigned long long>(BuildingsId(world)));
  }
  // Body state sent to players a tick: to each its relevant set, against every body to each.
  const uint64_t every_body_bytes = static_cast<uint64_t>(config.players) *
                                    static_cast<uint64_t>(config.bodies) * kBodyStateBytes;
  uint64_t relevant_bytes = 0;

  const auto period = std::chrono::nanoseconds(1'000'000'000 / config.hz);
  const float dt = 1.0f / static_cast<float>(config.hz);
  // The version that holds the latest tick's poses: each applied batch adds one.
  uint64_t expected_version = info->stats().version();
  std::vector<double> all_ms, second_ms;
  int overruns = 0, errors = 0;
  uint64_t hits = 0;
  // On a level: how the aimed shots ended.
  uint64_t aimed = 0, by_terrain = 0, by_buildings = 0, reached = 0;
  google::protobuf::Arena arena;
  const Clock::time_point start = Clock::now();
  for (int tick = 1; tick <= config.ticks; ++tick) {
    std::this_thread::sleep_until(start + (tick - 1) * period);
    world.Step(dt);
    v1::UpdateBatch update;
    update.set_tick(static_cast<uint64_t>(tick));
    world.AppendPoses(update.mutable_moves());
    v1::QueryBatch shots = Shots(config, world, rng);

    // The shots go first: they wait on the server for the version the update makes (which is
    // what min_version is for), so the server reads and checks them while the larger update is
    // still on its way, and answers them as soon as it is applied.
    const Clock::time_point sent = Clock::now();
    ++expected_version;
    shots.set_min_version(expected_version);
    absl::Status shots_sent = (*queries)->Send(shots);
    absl::StatusOr<uint64_t> sequence = (*writer)->Send(std::move(update));
    // The answer is parsed into an arena reset every tick: its thousand results and their hits
    // take no heap allocation of their own, and freeing them is one reset.
    arena.Reset();
    auto* answer = google::protobuf::Arena::CreateMessage<v1::QueryBatchResult>(&arena);
    absl::Status answered = shots_sent.ok() ? (*queries)->Read(answer) : shots_sent;
    absl::Status acked =
        sequence.ok() ? (*writer)->WaitAcknowledged(*sequence, absl::Now() + absl::Seconds(10))
                      : sequence.status();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();

    for (const client::RejectedBatch& rejected : (*writer)->TakeRejected()) {
      std::fprintf(stderr, "tick %d: update rejected: %s\n", tick,
                   rejected.status.ToString().c_str());
      --expected_version;
      ++errors;
    }
    if (!acked.ok()) {
      std::fprintf(stderr, "tick %d: update: %s\n", tick, acked.ToString().c_str());
      ++errors;
    }
    if (!answered.ok() || !client::BatchStatus(*answer).ok()) {
      std::fprintf(stderr, "tick %d: queries: %s\n", tick,
                   (answered.ok() ? client::BatchStatus(*answer) : answered).ToString().c_str());
      ++errors;
      if (!answered.ok()) {
        // The stream broke (the server restarted, say): a new one for the next tick.
        queries = client.OpenQueryStream(config.scene);
        if (!queries.ok()) return 1;
      }
    } else if (world.level == nullptr) {
      for (const v1::QueryResult& result : answer->results()) hits += result.hits_size();
    } else {
      const uint64_t terrain = TerrainId(world), buildings = BuildingsId(world);
      for (int q = 0; q < answer->results_size(); ++q) {
        const v1::QueryResult& result = answer->results(q);
        // The hits up to the first wall: a cast stops there.
        for (const v1::Hit& hit : result.hits()) {
          if (hit.body_id() == terrain || hit.body_id() == buildings) break;
          ++hits;
        }
        if (q >= config.rays) continue;
        ++aimed;
        switch (EndOf(result, terrain, buildings)) {
          case ShotEnd::kTerrain:
            ++by_terrain;
            break;
          case ShotEnd::kBuildings:
            ++by_buildings;
            break;
          case ShotEnd::kBody:
            ++reached;
            break;
          case ShotEnd::kNothing:
            break;
        }
      }
    }
    if (interest != nullptr) relevant_bytes += interest->relevant() * kBodyStateBytes;
    all_ms.push_back(ms);
    second_ms.push_back(ms);
    if (Clock::now() > start + tick * period) ++overruns;
    if (tick % config.hz == 0) {
      std::printf("t=%3ds  tick round trip p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms  hits %llu\n",
                  tick / config.hz, Percentile(second_ms, 0.50), Percentile(second_ms, 0.99),
                  *std::max_element(second_ms.begin(), second_ms.end()),
                  static_cast<unsigned long long>(hits));
      std::fflush(stdout);
      second_ms.clear();
    }
  }
  absl::Status closed = (*writer)->Close(absl::Now() + absl::Seconds(10));
  (*queries)->Finish().IgnoreError();
  if (interest != nullptr) {
    const uint64_t ticks = static_cast<uint64_t>(config.ticks);
    const uint64_t with = relevant_bytes / ticks;
    const uint64_t stream_bytes = interest->stream_bytes() / ticks;
    std::printf(
        "interest: %d players, %.1f relevant bodies each; body state a tick %llu bytes with "
        "interest vs %llu to every player: %llu bytes a tick saved (%.1f%%); interest stream "
        "%llu bytes a tick\n",
        config.players,
        static_cast<double>(relevant_bytes) / kBodyStateBytes / static_cast<double>(ticks) /
            config.players,
        static_cast<unsigned long long>(with), static_cast<unsigned long long>(every_body_bytes),
        static_cast<unsigned long long>(every_body_bytes - std::min(with, every_body_bytes)),
        every_body_bytes == 0
            ? 0.0
            : 100.0 * static_cast<double>(every_body_bytes - std::min(with, every_body_bytes)) /
                  static_cast<double>(every_body_bytes),
        static_cast<unsigned long long>(stream_bytes));
    interest.reset();
  }
  if (config.level) {
    std::printf(
        "level: %llu aimed shots, %llu blocked by the level (%llu by the terrain, %llu by "
        "buildings), %llu reached a body, %llu met nothing\n",
        static_cast<unsigned long long>(aimed),
        static_cast<unsigned long long>(by_terrain + by_buildings),
        static_cast<unsigned long long>(by_terrain), static_cast<unsigned long long>(by_buildings),
        static_cast<unsigned long long>(reached),
        static_cast<unsigned long long>(aimed - by_terrain - by_buildings - reached));
  }
  client::ResilientUpdateWriterStats stats = (*writer)->stats();
  std::printf(
      "ticks %d: tick round trip p50 %.2f ms, p99 %.2f ms, max %.2f ms; overruns %d, "
      "errors %d, reconnects %llu, hits %llu\n",
      config.ticks, Percentile(all_ms, 0.50), Percentile(all_ms, 0.99),
      all_ms.empty() ? 0.0 : *std::max_element(all_ms.begin(), all_ms.end()), overruns, errors,
      static_cast<unsigned long long>(stats.reconnects), static_cast<unsigned long long>(hits));
  absl::Status deleted = client.DeleteScene(config.scene);
  if (!closed.ok() || !deleted.ok()) {
    std::fprintf(stderr, "collide-arena: %s\n",
                 (!closed.ok() ? closed : deleted).ToString().c_str());
    return 1;
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace collide::arena

int main(int argc, char** argv) {
  collide::ParseProgramFlags(
      argc, argv,
      {.name = "collide-arena",
       .usage = "a 60 Hz game-server tick loop against a collide server: pose updates and "
                "hitscan queries every tick, with the tick round trip's percentiles.",
       .flags_file = "examples/arena/cpp/main.cc",
       .version = collide::kVersionLine});
  collide::client::GrpcRuntime grpc;

  collide::arena::Config config;
  config.address = absl::GetFlag(FLAGS_address);
  config.scene = absl::GetFlag(FLAGS_scene);
  config.ticks = absl::GetFlag(FLAGS_ticks);
  config.hz = absl::GetFlag(FLAGS_hz);
  config.bodies = absl::GetFlag(FLAGS_bodies);
  config.rays = absl::GetFlag(FLAGS_rays);
  config.casts = absl::GetFlag(FLAGS_casts);
  config.token = absl::GetFlag(FLAGS_token);
  config.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  config.seed = absl::GetFlag(FLAGS_seed);
  config.players = std::min(absl::GetFlag(FLAGS_players), config.bodies);
  config.interest_radius = absl::GetFlag(FLAGS_interest_radius);
  config.interest_max = absl::GetFlag(FLAGS_interest_max);
  config.level = absl::GetFlag(FLAGS_level);
  const std::string durability = absl::GetFlag(FLAGS_durability);
  if (durability == "none") {
    config.durability = collide::v1::DURABILITY_NONE;
  } else if (durability == "periodic") {
    config.durability = collide::v1::DURABILITY_PERIODIC;
  } else if (durability == "always") {
    config.durability = collide::v1::DURABILITY_ALWAYS;
  } else {
    std::fprintf(stderr, "--durability: must be none, periodic or always, not %s\n",
                 durability.c_str());
    return 2;
  }
  if (config.ticks < 1 || config.hz < 1 || config.hz > 1000 || config.bodies < 1 ||
      config.rays < 0 || config.casts < 0 || config.players < 0) {
    std::fprintf(stderr,
                 "--ticks, --hz (up to 1000) and --bodies must be at least 1; --rays, --casts "
                 "and --players at least 0\n");
    return 2;
  }
  if (!(config.interest_radius > 0) || !std::isfinite(config.interest_radius)) {
    std::fprintf(stderr, "--interest_radius: must be finite and positive\n");
    return 2;
  }
  return collide::arena::Run(config);
}
