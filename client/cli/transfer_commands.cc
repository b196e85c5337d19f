// collide scene export | scene import | backup | restore: scenes to files and back
// (ExportScene, ImportScene).

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command.h"
#include "client/cpp/export_file.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace collide::cli {
namespace {

namespace fs = std::filesystem;

// The manifest `collide backup` writes beside the scene files.
constexpr char kManifestName[] = "manifest.json";

// What one export wrote.
struct Exported {
  uint64_t version = 0;
  uint64_t tick = 0;
  uint64_t bodies = 0;
  uint64_t chunks = 0;
};

// Exports `scene` into `path` (through a temporary file renamed at the end, so that a failed
// export leaves no partial file under the name).
absl::StatusOr<Exported> ExportToFile(client::Client& client, const std::string& scene,
                                      const fs::path& path, client::ExportFormat format,
                                      uint32_t chunk_bodies) {
  const fs::path temp = fs::path(path).concat(".tmp");
  Exported exported;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::UnavailableError(absl::StrCat("cannot write ", temp.string()));
    }
    client::ExportFileWriter writer(&out, format);
    absl::Status status = client.ExportScene(
        scene,
        [&](const v1::SceneExportMessage& message) -> absl::Status {
          if (message.has_header()) {
            exported.version = message.header().version();
            exported.tick = message.header().tick();
          } else if (message.has_trailer()) {
            exported.bodies = message.trailer().body_count();
            exported.chunks = message.trailer().chunk_count();
          }
          return writer.Write(message);
        },
        chunk_bodies);
    out.close();
    if (status.ok() && !out)
      status = absl::UnavailableError(absl::StrCat("cannot write ", temp.string()));
    if (!status.ok()) {
      std::error_code ignored;
      fs::remove(temp, ignored);
      return status;
    }
  }
  std::error_code error;
  fs::rename(temp, path, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", temp.string(), ": ", error.message()));
  }
  return exported;
}

// Imports the export in `path` as `name` (empty: its own name).
absl::StatusOr<v1::SceneInfo> ImportFromFile(client::Client& client, const fs::path& path,
                                             std::optional<client::ExportFormat> format,
                                             const std::string& name, bool replace) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  client::ExportFileReader reader(&in, format);
  absl::StatusOr<v1::SceneInfo> scene = client.ImportScene(
      [&](v1::SceneExportMessage* message) { return reader.Next(message); }, name, replace);
  if (!scene.ok()) {
    return absl::Status(scene.status().code(),
                        absl::StrCat(path.string(), ": ", scene.status().message()));
  }
  return scene;
}

std::optional<client::ExportFormat> FormatFlag(Args& args) {
  if (!args.Has("format")) return std::nullopt;
  absl::StatusOr<client::ExportFormat> format = client::ParseExportFormat(args.String("format"));
  if (!format.ok()) {
    args.Fail(format.status());
    return std::nullopt;
  }
  return *format;
}

google::protobuf::Value Number(double value) {
  google::protobuf::Value out;
  out.set_number_value(value);
  return out;
}
google::protobuf::Value Text(const std::string& value) {
  google::protobuf::Value out;
  out.set_string_value(value);
  return out;
}

absl::Status ExportScene(CommandContext& c) {
  const std::string& scene = c.args.positional()[0];
  const std::string& file = c.args.positional()[1];
  const client::ExportFormat format = FormatFlag(c.args).value_or(client::ExportFormat::kPb);
  const uint32_t chunk_bodies = c.args.Uint32("chunk_bodies", 0);
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<Exported> exported = ExportToFile(c.client, scene, file, format, chunk_bodies);
  if (!exported.ok()) return exported.status();
  google::protobuf::Struct result;
  auto& fields = *result.mutable_fields();
  fields["scene"] = Text(scene);
  fields["file"] = Text(file);
  fields["format"] = Text(std::string(client::ExportFormatName(format)));
  fields["version"] = Number(static_cast<double>(exported->version));
  fields["tick"] = Number(static_cast<double>(exported->tick));
  fields["bodies"] = Number(static_cast<double>(exported->bodies));
  c.out.Print(result,
              absl::StrCat("exported scene ", scene, " at version ", exported->version, " (",
                           exported->bodies, " bodies, ", exported->chunks, " chunks) to ", file));
  return absl::OkStatus();
}

absl::Status ImportScene(CommandContext& c) {
  const std::string& file = c.args.positional()[0];
  const std::optional<client::ExportFormat> format = FormatFlag(c.args);
  const std::string name = c.args.String("name");
  const bool replace = c.args.Bool("replace");
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<v1::SceneInfo> scene = ImportFromFile(c.client, file, format, name, replace);
  if (!scene.ok()) return scene.status();
  v1::ImportSceneResponse response;
  *response.mutable_scene() = *scene;
  c.out.Print(response, absl::StrCat("imported scene ", scene->name(), " at version ",
                                     scene->stats().version(), " (", scene->stats().body_count(),
                                     " bodies) from ", file));
  return absl::OkStatus();
}

absl::Status Backup(CommandContext& c) {
  const fs::path dir = c.args.positional()[0];
  const client::ExportFormat format = FormatFlag(c.args).value_or(client::ExportFormat::kPb);
  if (!c.args.ok()) return c.args.status();
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir.string(), ": ", error.message()));
  }
  absl::StatusOr<std::vector<v1::SceneInfo>> scenes = c.client.ListScenes();
  if (!scenes.ok()) return scenes.status();
  google::protobuf::Struct manifest;
  auto& fields = *manifest.mutable_fields();
  fields["format"] = Text(std::string(client::ExportFormatName(format)));
  google::protobuf::ListValue* list = fields["scenes"].mutable_list_value();
  std::string text;
  for (const v1::SceneInfo& info : *scenes) {
    const std::string file = absl::StrCat(info.name(), ".", client::ExportFormatName(format));
    absl::StatusOr<Exported> exported = ExportToFile(c.client, info.name(), dir / file, format, 0);
    if (!exported.ok()) {
      return absl::Status(exported.status().code(),
                          absl::StrCat("scene ", info.name(), ": ", exported.status().message()));
    }
    google::protobuf::Struct entry;
    auto& e = *entry.mutable_fields();
    e["scene"] = Text(info.name());
    e["file"] = Text(file);
    // Versions and ticks are JSON numbers: exact up to 2^53.
    e["version"] = Number(static_cast<double>(exported->version));
    e["tick"] = Number(static_cast<double>(exported->tick));
    e["bodies"] = Number(static_cast<double>(exported->bodies));
    *list->add_values()->mutable_struct_value() = entry;
    absl::StrAppend(&text, "  ", info.name(), " version ", exported->version, ", ",
                    exported->bodies, " bodies -> ", file, "\n");
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  if (!google::protobuf::util::MessageToJsonString(manifest, &json, options).ok()) {
    return absl::InternalError("cannot encode the manifest");
  }
  const fs::path temp = dir / absl::StrCat(kManifestName, ".tmp");
  {
    std::ofstream out(temp, std::ios::trunc);
    out << json;
    out.close();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", temp.string()));
  }
  fs::rename(temp, dir / kManifestName, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot write the manifest: ", error.message()));
  }
  c.out.Print(manifest,
              absl::StrCat("backed up ", scenes->size(), " scenes to ", dir.string(), "\n", text));
  return absl::OkStatus();
}

absl::Status Restore(CommandContext& c) {
  const fs::path dir = c.args.positional()[0];
  const bool replace = c.args.Bool("replace");
  if (!c.args.ok()) return c.args.status();
  std::ifstream in(dir / kManifestName);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", (dir / kManifestName).string()));
  }
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  google::protobuf::Struct manifest;
  if (!google::protobuf::util::JsonStringToMessage(json, &manifest).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat((dir / kManifestName).string(), ": not a backup manifest"));
  }
  const auto& scenes = manifest.fields().find("scenes");
  if (scenes == manifest.fields().end() || !scenes->second.has_list_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat((dir / kManifestName).string(), ": no \"scenes\" list"));
  }
  v1::ListScenesResponse restored;
  std::string text;
  for (const google::protobuf::Value& value : scenes->second.list_value().values()) {
    const auto& entry = value.struct_value().fields();
    const auto file = entry.find("file");
    if (file == entry.end() || file->second.string_value().empty() ||
        fs::path(file->second.string_value()).has_parent_path()) {
      return absl::InvalidArgumentError(
          absl::StrCat((dir / kManifestName).string(), ": an entry without a plain \"file\""));
    }
    absl::StatusOr<v1::SceneInfo> scene =
        ImportFromFile(c.client, dir / file->second.string_value(), std::nullopt, "", replace);
    if (!scene.ok()) return scene.status();
    absl::StrAppend(&text, "  ", scene->name(), " version ", scene->stats().version(), ", ",
                    scene->stats().body_count(), " bodies\n");
    *restored.add_scenes() = *std::move(scene);
  }
  c.out.Print(restored, absl::StrCat("restored ", restored.scenes_size(), " scenes from ",
                                     dir.string(), "\n", text));
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> TransferCommands() {
  return {
      {.name = "scene export",
       .positional = "SCENE FILE",
       .positional_count = 2,
       .summary = "Writes a scene at one version to a file (ExportScene; admin).",
       .flags = {{"format", "pb|jsonl",
                  "pb: length-delimited protobuf (default); jsonl: one JSON object per line"},
                 {"chunk_bodies", "N", "the most bodies per chunk (default 4096)"}},
       .run = ExportScene},
      {.name = "scene import",
       .positional = "FILE",
       .positional_count = 1,
       .summary = "Creates a scene from an export file, all or nothing (ImportScene; admin).",
       .flags = {{"name", "SCENE", "the new scene's name (default: the exported one)"},
                 {"replace", "", "replace a scene of that name (default: ALREADY_EXISTS)"},
                 {"format", "pb|jsonl", "the file's format (default: guessed from its start)"}},
       .run = ImportScene},
      {.name = "backup",
       .positional = "DIR",
       .positional_count = 1,
       .summary = "Exports every scene to DIR, one file each, and a manifest.json (admin).",
       .flags = {{"format", "pb|jsonl", "the files' format (default pb)"}},
       .run = Backup},
      {.name = "restore",
       .positional = "DIR",
       .positional_count = 1,
       .summary = "Imports every scene of a backup's manifest.json (admin).",
       .flags = {{"replace", "", "replace scenes that exist (default: ALREADY_EXISTS)"}},
       .run = Restore},
  };
}

}  // namespace collide::cli
