// collide scene export | scene import | backup | restore: scenes to files and back
// (ExportScene, ImportScene).

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/command.h"
#include "client/cpp/export_file.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace collide::cli {
namespace {

namespace fs = std::filesystem;

// The manifest `collide backup` writes beside the scene files.
constexpr char kManifestName[] = "manifest.json";

// What an export's header and trailer say, and the bodies its chunks hold.
struct Exported {
  std::string scene;
  uint64_t version = 0;
  uint64_t tick = 0;
  uint64_t bodies = 0;
  uint64_t chunks = 0;
  uint32_t crc32c = 0;
  uint64_t chunk_bodies = 0;
};

void Note(const v1::SceneExportMessage& message, Exported* exported) {
  if (message.has_header()) {
    exported->scene = message.header().scene();
    exported->version = message.header().version();
    exported->tick = message.header().tick();
  } else if (message.has_chunk()) {
    exported->chunk_bodies += static_cast<uint64_t>(message.chunk().bodies_size());
  } else if (message.has_trailer()) {
    exported->bodies = message.trailer().body_count();
    exported->chunks = message.trailer().chunk_count();
    exported->crc32c = message.trailer().crc32c();
  }
}

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
          Note(message, &exported);
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

// Imports the export in `path` as `name` (empty: its own name); with `check_only`, the server
// checks it as an import and creates nothing. `read`, when given, receives what the file said.
absl::StatusOr<v1::SceneInfo> ImportFromFile(client::Client& client, const fs::path& path,
                                             std::optional<client::ExportFormat> format,
                                             const std::string& name, bool replace,
                                             bool check_only = false, Exported* read = nullptr) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  client::ExportFileReader reader(&in, format);
  auto source = [&](v1::SceneExportMessage* message) -> absl::StatusOr<bool> {
    absl::StatusOr<bool> more = reader.Next(message);
    if (more.ok() && *more && read != nullptr) Note(*message, read);
    return more;
  };
  absl::StatusOr<v1::SceneInfo> scene = check_only ? client.CheckImport(source, name, replace)
                                                   : client.ImportScene(source, name, replace);
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
  c.out.Print(result, absl::StrCat("exported scene ", scene, " at version ", exported->version,
                                   " (", Count(exported->bodies, "body", "bodies"), ", ",
                                   Count(exported->chunks, "chunk"), ") to ", file));
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
  c.out.Print(
      response,
      absl::StrCat("imported scene ", scene->name(), " at version ", scene->stats().version(), " (",
                   Count(scene->stats().body_count(), "body", "bodies"), ") from ", file));
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
    // The export's own checksum (its trailer's): restore checks each file against it.
    e["crc32c"] = Number(static_cast<double>(exported->crc32c));
    *list->add_values()->mutable_struct_value() = entry;
    absl::StrAppend(&text, "  ", info.name(), " version ", exported->version, ", ",
                    Count(exported->bodies, "body", "bodies"), " -> ", file, "\n");
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
  c.out.Print(manifest, absl::StrCat("backed up ", Count(scenes->size(), "scene"), " to ",
                                     dir.string(), "\n", text));
  return absl::OkStatus();
}

// One scene of a backup's manifest.
struct ManifestEntry {
  std::string scene;
  std::string file;
  uint64_t version = 0;
  uint64_t bodies = 0;
  uint32_t crc32c = 0;
};

// A manifest field that must be a whole number in [0, max]; records a problem in `error`.
uint64_t WholeField(const google::protobuf::Struct& entry, const std::string& name, double max,
                    const std::string& where, std::string* error) {
  const auto it = entry.fields().find(name);
  if (it == entry.fields().end() || !it->second.has_number_value()) {
    if (error->empty()) {
      *error = absl::StrCat(where, " has no \"", name, "\"",
                            name == "crc32c" ? " (a backup made before restore checked files: "
                                               "make it again)"
                                             : "");
    }
    return 0;
  }
  const double value = it->second.number_value();
  if (!(value >= 0 && value <= max) || value != static_cast<double>(static_cast<uint64_t>(value))) {
    if (error->empty()) *error = absl::StrCat(where, ": \"", name, "\" is not a whole number");
    return 0;
  }
  return static_cast<uint64_t>(value);
}

// The scenes `dir`/manifest.json lists, each with its file (a plain name in `dir`).
absl::StatusOr<std::vector<ManifestEntry>> ReadManifest(const fs::path& dir) {
  const std::string path = (dir / kManifestName).string();
  std::ifstream in(dir / kManifestName);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  google::protobuf::Struct manifest;
  if (!google::protobuf::util::JsonStringToMessage(json, &manifest).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a backup manifest"));
  }
  const auto& scenes = manifest.fields().find("scenes");
  if (scenes == manifest.fields().end() || !scenes->second.has_list_value()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no \"scenes\" list"));
  }
  std::vector<ManifestEntry> entries;
  for (const google::protobuf::Value& value : scenes->second.list_value().values()) {
    const std::string where = absl::StrCat(path, ": scenes[", entries.size(), "]");
    const google::protobuf::Struct& fields = value.struct_value();
    ManifestEntry entry;
    const auto text = [&](const char* name) {
      const auto it = fields.fields().find(name);
      return it == fields.fields().end() ? std::string() : it->second.string_value();
    };
    entry.scene = text("scene");
    entry.file = text("file");
    if (entry.scene.empty() || entry.file.empty() || fs::path(entry.file).has_parent_path()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": an entry without a \"scene\" or a plain \"file\""));
    }
    std::string error;
    // JSON numbers: exact up to 2^53, which bounds what a manifest can say.
    entry.version = WholeField(fields, "version", 9007199254740992.0, where, &error);
    entry.bodies = WholeField(fields, "bodies", 9007199254740992.0, where, &error);
    entry.crc32c = static_cast<uint32_t>(WholeField(fields, "crc32c", 4294967295.0, where, &error));
    if (!error.empty()) return absl::InvalidArgumentError(error);
    entries.push_back(std::move(entry));
  }
  return entries;
}

// Where the file `read` disagrees with its manifest entry; empty when it agrees.
std::string Disagreement(const ManifestEntry& entry, const Exported& read) {
  std::vector<std::string> found;
  if (read.scene != entry.scene) {
    found.push_back(
        absl::StrCat("its scene is \"", read.scene, "\", the manifest says \"", entry.scene, "\""));
  }
  if (read.version != entry.version) {
    found.push_back(absl::StrCat("version ", read.version, ", the manifest says ", entry.version));
  }
  if (read.bodies != entry.bodies || read.chunk_bodies != entry.bodies) {
    found.push_back(absl::StrCat(Count(read.chunk_bodies, "body", "bodies"), ", the manifest says ",
                                 entry.bodies));
  }
  if (read.crc32c != entry.crc32c) {
    found.push_back(absl::StrCat("crc32c ", read.crc32c, ", the manifest says ", entry.crc32c));
  }
  return absl::StrJoin(found, "; ");
}

google::protobuf::Value SceneValue(const std::string& scene, const std::string& outcome) {
  google::protobuf::Value out;
  auto& fields = *out.mutable_struct_value()->mutable_fields();
  fields["scene"] = Text(scene);
  fields["outcome"] = Text(outcome);
  return out;
}

// collide restore DIR: every file the manifest lists is checked first (against the manifest,
// then by the server as an import that creates nothing: values, counts, checksum, the target),
// and imported only when all of them pass; a failure while importing deletes what this restore
// created.
absl::Status Restore(CommandContext& c) {
  const fs::path dir = c.args.positional()[0];
  const bool replace = c.args.Bool("replace");
  const bool skip_existing = c.args.Bool("skip_existing");
  if (replace && skip_existing) {
    c.args.Fail(absl::InvalidArgumentError("--replace, --skip_existing: give at most one"));
  }
  if (!c.args.ok()) return c.args.status();
  absl::StatusOr<std::vector<ManifestEntry>> entries = ReadManifest(dir);
  if (!entries.ok()) {
    return absl::Status(entries.status().code(),
                        absl::StrCat("nothing restored: ", entries.status().message()));
  }

  // 1. Checks that change nothing.
  std::vector<std::string> problems;
  std::vector<std::string> existing;
  std::vector<bool> exists(entries->size(), false);
  absl::StatusCode code = absl::StatusCode::kOk;
  for (size_t i = 0; i < entries->size(); ++i) {
    const ManifestEntry& entry = (*entries)[i];
    const fs::path file = dir / entry.file;
    Exported read;
    absl::StatusOr<v1::SceneInfo> checked =
        ImportFromFile(c.client, file, std::nullopt, "", replace, /*check_only=*/true, &read);
    const bool already = absl::IsAlreadyExists(checked.status());
    if (!checked.ok() && !already) {
      problems.push_back(std::string(checked.status().message()));
      if (code == absl::StatusCode::kOk) code = checked.status().code();
      continue;
    }
    // The server read the whole file (existence is checked last): compare it with the manifest.
    if (std::string wrong = Disagreement(entry, read); !wrong.empty()) {
      problems.push_back(absl::StrCat(file.string(), ": ", wrong));
      if (code == absl::StatusCode::kOk) code = absl::StatusCode::kDataLoss;
      continue;
    }
    if (already) {
      exists[i] = true;
      existing.push_back(entry.scene);
    }
  }
  if (!problems.empty()) {
    return absl::Status(code, absl::StrCat("nothing restored from ", dir.string(), ": ",
                                           absl::StrJoin(problems, "; ")));
  }
  if (!existing.empty() && !skip_existing) {
    return absl::AlreadyExistsError(
        absl::StrCat("nothing restored from ", dir.string(),
                     ": these scenes exist: ", absl::StrJoin(existing, ", "),
                     " (--skip_existing restores the others, --replace replaces them)"));
  }

  // 2. The imports. The scenes there now, to tell what an import creates from what it replaces.
  absl::StatusOr<std::vector<v1::SceneInfo>> before = c.client.ListScenes();
  if (!before.ok()) return before.status();
  std::set<std::string> there;
  for (const v1::SceneInfo& info : *before) there.insert(info.name());
  google::protobuf::Struct result;
  google::protobuf::ListValue* scenes = (*result.mutable_fields())["scenes"].mutable_list_value();
  std::string text;
  std::vector<std::string> created;
  size_t replaced = 0;
  size_t restored = 0;
  for (size_t i = 0; i < entries->size(); ++i) {
    const ManifestEntry& entry = (*entries)[i];
    if (exists[i]) {
      *scenes->add_values() = SceneValue(entry.scene, "skipped");
      absl::StrAppend(&text, "  skipped ", entry.scene, " (it exists)\n");
      continue;
    }
    absl::StatusOr<v1::SceneInfo> scene =
        ImportFromFile(c.client, dir / entry.file, std::nullopt, "", replace);
    if (!scene.ok()) {
      // Undo what this restore created (a replaced scene cannot be given back).
      std::string undone;
      for (const std::string& name : created) {
        absl::Status deleted = c.client.DeleteScene(name);
        absl::StrAppend(
            &undone, undone.empty() ? "" : ", ", name,
            deleted.ok() ? " deleted" : absl::StrCat(" NOT deleted: ", deleted.ToString()));
      }
      return absl::Status(
          scene.status().code(),
          absl::StrCat(scene.status().message(), "; restore stopped at ", entry.scene,
                       created.empty() ? "" : absl::StrCat("; the scenes it had created: ", undone),
                       replaced > 0 ? absl::StrCat("; the ", Count(replaced, "scene"),
                                                   " it had replaced stay",
                                                   replaced == 1 ? "s" : "", " replaced")
                                    : ""));
    }
    ++restored;
    if (there.contains(entry.scene)) {
      ++replaced;
    } else {
      created.push_back(entry.scene);
    }
    *scenes->add_values() = SceneValue(entry.scene, "restored");
    absl::StrAppend(&text, "  restored ", scene->name(), " version ", scene->stats().version(),
                    ", ", Count(scene->stats().body_count(), "body", "bodies"), "\n");
  }
  c.out.Print(result,
              absl::StrCat("restored ", Count(restored, "scene"), " from ", dir.string(),
                           existing.empty() ? ""
                                            : absl::StrCat(" (skipped ", existing.size(),
                                                           existing.size() == 1 ? " that exists)"
                                                                                : " that exist)"),
                           "\n", text));
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
       .summary = "Imports every scene of a backup's manifest.json, all or nothing (admin).",
       .flags = {{"replace", "", "replace scenes that exist (default: nothing is restored)"},
                 {"skip_existing", "", "restore the scenes that do not exist, skip the others"}},
       .run = Restore},
  };
}

}  // namespace collide::cli
