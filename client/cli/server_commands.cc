// collide stats | health.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/cli/command.h"
#include "client/cpp/grpc_status.h"
#include "client/health/health_check.h"
#include "collide/v1/collide.grpc.pb.h"

namespace collide::cli {
namespace {

absl::Status Stats(CommandContext& c) {
  std::optional<uint32_t> max_scenes;
  if (c.args.Has("max_scenes")) max_scenes = c.args.Uint32("max_scenes", 0);
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<v1::GetServerStatsResponse> response = c.client.GetServerStats(max_scenes);
  if (!response.ok()) return response.status();
  const v1::GetServerStatsResponse& stats = *response;
  std::string text;
  auto line = [&text](absl::string_view name, const auto& value) {
    std::string head = absl::StrCat(name);
    // One column of values: the longest name (start_time_unix_seconds) and two spaces.
    head.resize(std::max<size_t>(head.size() + 2, 25), ' ');
    absl::StrAppend(&text, head, value, "\n");
  };
  line("server_version", stats.server_version());
  line("server_commit",
       stats.server_commit().empty() ? "(not built from git)" : stats.server_commit());
  line("build_type", stats.build_type());
  line("start_time_unix_seconds",
       absl::StrCat(stats.start_time_unix_seconds(), " (",
                    absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                     absl::FromUnixSeconds(stats.start_time_unix_seconds()),
                                     absl::UTCTimeZone()),
                    ")"));
  line("uptime_seconds", stats.uptime_seconds());
  line("resident_memory_bytes", stats.resident_memory_bytes());
  line("scenes", stats.scenes());
  line("writable", stats.writable() ? "yes" : "no");
  if (!stats.write_error().empty()) line("write_error", stats.write_error());
  line("update_streams", stats.update_streams());
  line("query_streams", stats.query_streams());
  line("watch_streams", stats.watch_streams());
  line("export_streams", stats.export_streams());
  line("import_streams", stats.import_streams());
  line("interest_streams", stats.interest_streams());
  line("interest_observers", stats.interest_observers());
  line("upload_streams", stats.upload_streams());
  line("streams_opened", stats.streams_opened());
  line("streams_refused", stats.streams_refused());
  line("streams_stalled", stats.streams_stalled());
  line("outbound_bytes", stats.outbound_bytes());
  line("watch_fences", stats.watch_fences());
  line("watch_contents", stats.watch_contents());
  line("watch_queued_bytes", stats.watch_queued_bytes());
  line("watch_backlog_bytes", stats.watch_backlog_bytes());
  line("watch_resyncs", stats.watch_resyncs());
  line("watch_exhausted", stats.watch_exhausted());
  line("sync_lag_us", stats.sync_lag_us());
  line("max_sync_lag_us", stats.max_sync_lag_us());
  line("assets", stats.assets());
  line("asset_triangles", stats.asset_triangles());
  line("asset_bytes", stats.asset_bytes());
  line("asset_memory_bytes", stats.asset_memory_bytes());
  line("scenes_omitted", stats.scenes_omitted());
  line("server_address", stats.server_address());
  // Replication (--nats_url): this server's part, then each replicated scene listed below.
  const v1::ReplicationStats& replication = stats.replication();
  absl::StrAppend(&text, "replication\n");
  if (!replication.enabled()) {
    absl::StrAppend(&text, "  enabled                no (the server has no --nats_url)\n");
  } else {
    auto sub = [&line](absl::string_view name, const auto& value) {
      line(absl::StrCat("  ", name), value);
    };
    sub("enabled", "yes");
    sub("connected", replication.connected() ? "yes" : "no");
    sub("address", replication.address());
    sub("owned_scenes", replication.owned_scenes());
    sub("followed_scenes", replication.followed_scenes());
    sub("takeovers", replication.takeovers());
    sub("depositions", replication.depositions());
    sub("rebuilds", replication.rebuilds());
    sub("records_published", replication.records_published());
    sub("records_applied", replication.records_applied());
    sub("snapshots_published", replication.snapshots_published());
    for (const v1::ServerSceneStats& scene : stats.scene_stats()) {
      if (!scene.has_replication()) continue;
      const v1::SceneReplication& r = scene.replication();
      sub(absl::StrCat("scene ", scene.name()),
          absl::StrCat(r.owned() ? "owner" : absl::StrCat("follows ", r.owner()), ", epoch ",
                       r.epoch(), ", ", r.state(), ", through sequence ", r.applied_sequence(),
                       ", behind ", r.lag_sequences(), " (", r.lag_ms(), " ms)"));
    }
  }
  // One row per listed scene, under a header naming ServerSceneStats' fields.
  if (stats.scene_stats_size() > 0) {
    size_t name_width = 4;
    for (const v1::ServerSceneStats& scene : stats.scene_stats()) {
      name_width = std::max(name_width, scene.name().size());
    }
    auto row = [&text, name_width](absl::string_view name, std::vector<std::string> cells) {
      std::string out(name);
      out.resize(name_width + 2, ' ');
      for (std::string& cell : cells) {
        if (cell.size() < 16) cell.insert(0, 16 - cell.size(), ' ');
        absl::StrAppend(&out, cell, " ");
      }
      out.pop_back();
      absl::StrAppend(&text, out, "\n");
    };
    // (Each replicated scene's `replication` is listed under replication, above.)
    absl::StrAppend(&text, "scene_stats\n");
    row("name",
        {"body_count", "static_body_count", "version", "tick", "memory_bytes", "history_bytes",
         "log_bytes", "asset_count", "asset_triangles", "asset_bytes", "asset_memory_bytes"});
    for (const v1::ServerSceneStats& scene : stats.scene_stats()) {
      row(scene.name(), {absl::StrCat(scene.body_count()), absl::StrCat(scene.static_body_count()),
                         absl::StrCat(scene.version()), absl::StrCat(scene.tick()),
                         absl::StrCat(scene.memory_bytes()), absl::StrCat(scene.history_bytes()),
                         absl::StrCat(scene.log_bytes()), absl::StrCat(scene.asset_count()),
                         absl::StrCat(scene.asset_triangles()), absl::StrCat(scene.asset_bytes()),
                         absl::StrCat(scene.asset_memory_bytes())});
    }
  }
  c.out.Print(stats, text);
  return absl::OkStatus();
}

absl::Status Health(CommandContext& c) {
  absl::StatusOr<ServingStatus> serving = CheckHealth(c.client.channel(), c.args.String("service"),
                                                      c.client.options().default_deadline);
  if (!serving.ok()) return serving.status();
  std::string name = ServingStatusName(*serving);
  c.out.PrintText(c.out.json() ? absl::StrCat("{\"status\":", JsonString(name), "}") : name);
  if (*serving != ServingStatus::kServing) {
    return absl::UnavailableError(absl::StrCat("the server reports ", name));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> ServerCommands() {
  return {
      {.name = "stats",
       .summary = "Shows the server's build, uptime, memory, counters and scenes "
                  "(GetServerStats).",
       .flags = {{"max_scenes", "N",
                  "list at most N scenes (default: the server's, 100; at most 1000; 0: none)"}},
       .run = Stats},
      {.name = "health",
       .summary = "SERVING or NOT_SERVING (grpc.health.v1); exit 0 only if SERVING.",
       .flags = {{"service", "NAME", "the service to check (default \"\": the whole server)"}},
       .run = Health},
  };
}

}  // namespace collide::cli
