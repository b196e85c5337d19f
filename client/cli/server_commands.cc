// collide stats | health.

#include <memory>
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
  std::unique_ptr<v1::Collide::Stub> stub = v1::Collide::NewStub(c.client.channel());
  std::unique_ptr<grpc::ClientContext> context = c.client.NewContext("", /*unary=*/true);
  v1::GetServerStatsResponse stats;
  absl::Status status = client::FromGrpcStatus(
      stub->GetServerStats(context.get(), v1::GetServerStatsRequest(), &stats));
  if (!status.ok()) return status;
  std::string text;
  auto line = [&text](absl::string_view name, const auto& value) {
    std::string head = absl::StrCat(name);
    head.resize(std::max<size_t>(head.size() + 2, 22), ' ');
    absl::StrAppend(&text, head, value, "\n");
  };
  line("scenes", stats.scenes());
  line("writable", stats.writable() ? "yes" : "no");
  if (!stats.write_error().empty()) line("write_error", stats.write_error());
  line("update_streams", stats.update_streams());
  line("query_streams", stats.query_streams());
  line("watch_streams", stats.watch_streams());
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
      {.name = "stats", .summary = "Shows the server's counters (GetServerStats).", .run = Stats},
      {.name = "health",
       .summary = "SERVING or NOT_SERVING (grpc.health.v1); exit 0 only if SERVING.",
       .flags = {{"service", "NAME", "the service to check (default \"\": the whole server)"}},
       .run = Health},
  };
}

}  // namespace collide::cli
