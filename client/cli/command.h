#pragma once

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "client/cli/args.h"
#include "client/cli/output.h"
#include "client/cpp/client.h"

namespace collide::cli {

/// One flag a command accepts.
struct FlagSpec {
  /// The name without dashes.
  absl::string_view name = "";
  /// What its value looks like ("x,y,z", "N"); empty for a boolean flag.
  absl::string_view value;
  /// One line of help.
  absl::string_view help;
  /// May be given more than once (read with Args::Repeated).
  bool repeated = false;
  /// Another name the flag is accepted under (an older spelling), without dashes; its value is
  /// read under `name`. Empty: none.
  absl::string_view alias = "";
};

/// What a command runs with.
struct CommandContext {
  /// The command's own positional words (after the command name) and flags.
  Args& args;
  /// Connected lazily: the first rpc connects.
  client::Client& client;
  /// Where results go (human text or JSON).
  Output& out;
};

/// One subcommand of `collide`.
struct Command {
  /// The words that name it ("scene create", "raycast").
  absl::string_view name = "";
  /// The positional arguments after the name ("SCENE").
  absl::string_view positional = "";
  /// How many positional words it takes.
  int positional_count = 0;
  /// One line: what it does and which rpc it calls.
  absl::string_view summary = "";
  /// The flags it accepts, beyond the global ones.
  std::vector<FlagSpec> flags = {};
  /// Runs it; the status is printed as `error: CODE: message`.
  absl::Status (*run)(CommandContext& context) = nullptr;
};

/// The scene commands: create, delete, list, get.
std::vector<Command> SceneCommands();
/// The body commands: add, move, remove, get.
std::vector<Command> BodyCommands();
/// The query commands: raycast, spherecast, overlap, point, aabb.
std::vector<Command> QueryCommands();
/// The operator's commands: stats, health.
std::vector<Command> ServerCommands();
/// The watch command.
std::vector<Command> WatchCommands();
/// The interest command.
std::vector<Command> InterestCommands();
/// Moving scenes: scene export, scene import, backup, restore.
std::vector<Command> TransferCommands();
/// Moving a scene to another server: scene move.
std::vector<Command> MoveCommands();
/// Level geometry: mesh upload, mesh list, mesh delete.
std::vector<Command> MeshCommands();

}  // namespace collide::cli
