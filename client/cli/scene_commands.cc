// collide scene create | delete | list | get.

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/command.h"

namespace collide::cli {
namespace {

absl::Status ParseDurability(absl::string_view name, v1::Durability* durability) {
  if (name == "default") {
    *durability = v1::DURABILITY_DEFAULT;
  } else if (name == "none") {
    *durability = v1::DURABILITY_NONE;
  } else if (name == "periodic") {
    *durability = v1::DURABILITY_PERIODIC;
  } else if (name == "always") {
    *durability = v1::DURABILITY_ALWAYS;
  } else if (name == "replicated") {
    *durability = v1::DURABILITY_REPLICATED;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--durability: expected default, none, periodic, always or replicated, got \"",
                     name, "\""));
  }
  return absl::OkStatus();
}

absl::Status CreateScene(CommandContext& c) {
  v1::CreateSceneRequest request;
  request.set_scene(c.args.positional()[0]);
  v1::SceneOptions* options = request.mutable_options();
  if (c.args.Has("fat_margin")) options->set_fat_margin(c.args.Float("fat_margin", 0.0f));
  if (c.args.Has("max_bodies")) {
    uint64_t max_bodies = c.args.Uint64("max_bodies", 0);
    if (max_bodies > UINT32_MAX) {
      c.args.Fail(absl::InvalidArgumentError("--max_bodies: at most 4294967295"));
    }
    options->set_max_bodies(static_cast<uint32_t>(max_bodies));
  }
  if (c.args.Has("history_ticks")) {
    uint64_t history_ticks = c.args.Uint64("history_ticks", 0);
    if (history_ticks > UINT32_MAX) {
      c.args.Fail(absl::InvalidArgumentError("--history_ticks: at most 4294967295"));
    }
    options->set_history_ticks(static_cast<uint32_t>(history_ticks));
  }
  if (c.args.Has("durability")) {
    v1::Durability durability = v1::DURABILITY_DEFAULT;
    c.args.Fail(ParseDurability(c.args.String("durability"), &durability));
    options->set_durability(durability);
  }
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<v1::SceneInfo> scene = c.client.CreateScene(request);
  if (!scene.ok()) return scene.status();
  v1::CreateSceneResponse response;
  *response.mutable_scene() = *scene;
  c.out.Print(response,
              absl::StrCat("created scene ", scene->name(), " (durability ",
                           DurabilityName(scene->options().durability()), ", max_bodies ",
                           scene->options().max_bodies(), ", fat_margin ",
                           FormatNumber(scene->options().fat_margin()),
                           c.args.Has("history_ticks")
                               ? absl::StrCat(", history_ticks ", scene->options().history_ticks())
                               : "",
                           ")"));
  return absl::OkStatus();
}

absl::Status DeleteScene(CommandContext& c) {
  const std::string& name = c.args.positional()[0];
  absl::Status status = c.client.DeleteScene(name);
  if (!status.ok()) return status;
  c.out.Print(v1::DeleteSceneResponse(), absl::StrCat("deleted scene ", name));
  return absl::OkStatus();
}

// The addresses of --shards: comma-separated, none empty, no address twice.
absl::StatusOr<std::vector<std::string>> ParseShards(absl::string_view list) {
  std::vector<std::string> shards = absl::StrSplit(list, ',');
  std::set<std::string> seen;
  for (const std::string& shard : shards) {
    if (shard.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--shards: expected comma-separated HOST:PORT addresses, got \"", list, "\""));
    }
    if (!seen.insert(shard).second) {
      return absl::InvalidArgumentError(absl::StrCat("--shards: \"", shard, "\" is named twice"));
    }
  }
  return shards;
}

// `collide scene list --shards A,B,C`: ListScenes on each shard directly (the global options but
// the address), each scene named with its shard. Every shard that answers is listed; those that
// do not are named (JSON: their "error") and fail the command once the others are printed.
absl::Status ListShardScenes(CommandContext& c) {
  absl::StatusOr<std::vector<std::string>> shards = ParseShards(c.args.String("shards"));
  if (!shards.ok()) c.args.Fail(shards.status());
  if (!c.args.ok()) return c.args.status();
  std::string text;
  std::vector<std::string> json;
  std::vector<std::string> unreachable;
  absl::StatusCode first_code = absl::StatusCode::kOk;
  size_t total = 0;
  for (const std::string& shard : *shards) {
    client::ClientOptions options = c.client.options();
    options.address = shard;
    absl::StatusOr<std::unique_ptr<client::Client>> client = client::Client::Connect(options);
    absl::StatusOr<std::vector<v1::SceneInfo>> scenes =
        client.ok() ? (*client)->ListScenes()
                    : absl::StatusOr<std::vector<v1::SceneInfo>>(client.status());
    if (!scenes.ok()) {
      if (first_code == absl::StatusCode::kOk) first_code = scenes.status().code();
      const std::string error = absl::StrCat(absl::StatusCodeToString(scenes.status().code()), ": ",
                                             scenes.status().message());
      unreachable.push_back(absl::StrCat("shard ", shard, ": ", error));
      json.push_back(
          absl::StrCat("{\"shard\":", JsonString(shard), ",\"error\":", JsonString(error), "}"));
      continue;
    }
    v1::ListScenesResponse response;
    for (const v1::SceneInfo& scene : *scenes) {
      *response.add_scenes() = scene;
      absl::StrAppend(&text, shard, "  ", FormatSceneLine(scene), "\n");
    }
    total += scenes->size();
    json.push_back(
        absl::StrCat("{\"shard\":", JsonString(shard), ",\"scenes\":", ToJson(response), "}"));
  }
  if (c.out.json()) {
    c.out.PrintText(absl::StrCat("{\"shards\":[", absl::StrJoin(json, ","), "]}"));
  } else if (unreachable.size() < shards->size()) {
    c.out.PrintText(total == 0 ? "no scenes" : text);
  }
  if (!unreachable.empty()) {
    // The scenes of the shards that answered are above; these are missing from the list.
    return absl::Status(
        first_code,
        absl::StrCat(
            unreachable.size() == 1 ? "" : "unreachable shards: ", absl::StrJoin(unreachable, "; "),
            unreachable.size() < shards->size() ? " (the scenes of the other shards are listed)"
                                                : ""));
  }
  return absl::OkStatus();
}

absl::Status ListScenes(CommandContext& c) {
  if (c.args.Has("shards")) return ListShardScenes(c);
  absl::StatusOr<std::vector<v1::SceneInfo>> scenes = c.client.ListScenes();
  if (!scenes.ok()) return scenes.status();
  v1::ListScenesResponse response;
  std::string text;
  for (const v1::SceneInfo& scene : *scenes) {
    *response.add_scenes() = scene;
    absl::StrAppend(&text, FormatSceneLine(scene), "\n");
  }
  c.out.Print(response, scenes->empty() ? "no scenes" : text);
  return absl::OkStatus();
}

absl::Status GetScene(CommandContext& c) {
  absl::StatusOr<v1::SceneInfo> scene = c.client.GetScene(c.args.positional()[0]);
  if (!scene.ok()) return scene.status();
  v1::GetSceneResponse response;
  *response.mutable_scene() = *scene;
  c.out.Print(response, FormatScene(*scene));
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> SceneCommands() {
  return {
      {.name = "scene create",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Creates an empty scene (CreateScene; admin).",
       .flags = {{"durability", "default|none|periodic|always|replicated",
                  "when update batches are acknowledged (default: the server's --durability; "
                  "replicated: stored by the NATS JetStream cluster of a server started with "
                  "--nats_url, and followed by its other servers)"},
                 {"max_bodies", "N", "the most bodies the scene may hold (default 1000000)"},
                 {"fat_margin", "F", "how far tree leaves reach beyond bodies (default 0.1)"},
                 {"history_ticks", "N",
                  "how many ticks queries may name with at_tick (0 to 4096; default 64)"}},
       .run = CreateScene},
      {.name = "scene delete",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Deletes a scene and its bodies (DeleteScene; admin).",
       .run = DeleteScene},
      {.name = "scene list",
       .summary = "Lists the scenes the token may see (ListScenes).",
       .flags = {{"shards", "HOST:PORT,...",
                  "ask each of these servers directly instead of --address; every scene line "
                  "starts with its shard (JSON: {\"shards\":[{\"shard\":..., \"scenes\":"
                  "{ListScenesResponse}}]}); a shard that does not answer is named (JSON: its "
                  "\"error\") and fails the command after the others are listed"}},
       .run = ListScenes},
      {.name = "scene get",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Shows one scene's settings and counters (GetScene).",
       .run = GetScene},
  };
}

}  // namespace collide::cli
