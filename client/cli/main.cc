// collide: the command-line client of collide-server. Subcommands for every rpc; human-readable
// output, or JSON with --json. Errors print `error: <CODE>: <message>` to stderr and exit 1
// (2 for a bad command line).

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/cli/args.h"
#include "client/cli/command.h"
#include "client/cli/output.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_runtime.h"

namespace collide::cli {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr absl::string_view kDefaultAddress = "127.0.0.1:50051";

const std::vector<FlagSpec>& GlobalFlags() {
  static const std::vector<FlagSpec> flags = {
      {"address", "HOST:PORT", "the server (default $COLLIDE_ADDRESS, else 127.0.0.1:50051)"},
      {"token", "TOKEN", "bearer token for a server with a token file (default $COLLIDE_TOKEN)"},
      {"json", "", "print the response message as one line of JSON"},
      {"timeout", "SECONDS", "deadline of each call (default 10)"},
      {"tls", "", "connect with TLS, verifying the server with the system's roots"},
      {"tls_ca", "FILE", "PEM certificates that verify the server (implies --tls)"},
      {"tls_cert", "FILE", "PEM client certificate, for servers that require one"},
      {"tls_key", "FILE", "PEM key of --tls_cert"},
      {"help", "", "this help, or a command's with `collide help COMMAND`"},
  };
  return flags;
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = [] {
    std::vector<Command> all;
    for (auto group : {SceneCommands, BodyCommands, QueryCommands}) {
      for (Command& command : group()) all.push_back(std::move(command));
    }
    return all;
  }();
  return commands;
}

std::string FlagLine(const FlagSpec& flag) {
  std::string form = absl::StrCat("--", flag.name);
  if (!flag.value.empty()) absl::StrAppend(&form, "=", flag.value);
  std::string line = absl::StrCat("  ", form);
  line.resize(std::max<size_t>(line.size() + 2, 34), ' ');
  return absl::StrCat(line, flag.help, "\n");
}

std::string Usage(const Command& command) {
  std::string usage = absl::StrCat("collide ", command.name);
  if (!command.positional.empty()) absl::StrAppend(&usage, " ", command.positional);
  if (!command.flags.empty()) absl::StrAppend(&usage, " [flags]");
  return usage;
}

std::string GeneralHelp() {
  std::string text =
      "collide: the command-line client of collide-server.\n\n"
      "usage: collide [global flags] COMMAND [ARGS] [flags]\n"
      "Flags take the form --name=value (boolean flags: --name). Vectors are x,y,z; rotations\n"
      "x,y,z,w unit quaternions.\n\ncommands:\n";
  for (const Command& command : Commands()) {
    std::string line = absl::StrCat("  ", command.name, " ", command.positional);
    line.resize(std::max<size_t>(line.size() + 2, 26), ' ');
    absl::StrAppend(&text, line, command.summary, "\n");
  }
  absl::StrAppend(&text, "  help COMMAND            Explains a command and its flags.\n");
  absl::StrAppend(&text, "\nglobal flags (anywhere on the line):\n");
  for (const FlagSpec& flag : GlobalFlags()) absl::StrAppend(&text, FlagLine(flag));
  absl::StrAppend(&text,
                  "\nExamples:\n"
                  "  collide scene create arena\n"
                  "  collide body add arena --id=1 --sphere=0.5 --pos=0,0,5\n"
                  "  collide raycast arena --from=0,0,0 --dir=0,0,1\n");
  return text;
}

std::string CommandHelp(const Command& command) {
  std::string text = absl::StrCat("usage: ", Usage(command), "\n\n", command.summary, "\n");
  if (!command.flags.empty()) {
    absl::StrAppend(&text, "\nflags:\n");
    for (const FlagSpec& flag : command.flags) absl::StrAppend(&text, FlagLine(flag));
  }
  absl::StrAppend(&text, "\nGlobal flags (--address, --token, --json, ...): collide --help\n");
  return text;
}

// The command named by the first one or two positional words, or nullptr.
const Command* FindCommand(const std::vector<std::string>& words, size_t* name_words) {
  for (const Command& command : Commands()) {
    size_t count = std::count(command.name.begin(), command.name.end(), ' ') + 1;
    if (words.size() < count) continue;
    std::vector<std::string> head(words.begin(), words.begin() + count);
    if (absl::StrJoin(head, " ") == command.name) {
      *name_words = count;
      return &command;
    }
  }
  return nullptr;
}

int Fail(const absl::Status& status, int exit_code) {
  std::cerr << "error: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
            << "\n";
  return exit_code;
}

int UsageError(absl::string_view message) {
  return Fail(absl::InvalidArgumentError(message), kExitUsage);
}

std::string EnvOr(const char* name, absl::string_view fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::string(fallback);
}

int Run(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  absl::StatusOr<Args> parsed = Args::Parse(words);
  if (!parsed.ok()) return Fail(parsed.status(), kExitUsage);
  Args& args = *parsed;

  // Global flags, wherever they are.
  client::ClientOptions options;
  options.address = args.Take("address").value_or(EnvOr("COLLIDE_ADDRESS", kDefaultAddress));
  options.bearer_token = args.Take("token").value_or(EnvOr("COLLIDE_TOKEN", ""));
  // Global flags are read, then removed so that only the command's own flags remain.
  bool json = args.Bool("json");
  bool help = args.Bool("help");
  bool tls = args.Bool("tls");
  float timeout_seconds = args.Float("timeout", 10.0f);
  if (!args.ok()) return Fail(args.status(), kExitUsage);
  for (absl::string_view name : {"json", "help", "tls", "timeout"}) args.Take(name);
  options.default_deadline = absl::Seconds(timeout_seconds);
  options.stream_deadline = absl::Seconds(timeout_seconds);
  options.use_tls = tls;
  for (auto [name, field] : {std::pair{"tls_ca", &options.tls_root_cert_pem},
                             std::pair{"tls_cert", &options.tls_client_cert_pem},
                             std::pair{"tls_key", &options.tls_client_key_pem}}) {
    if (std::optional<std::string> path = args.Take(name)) {
      absl::StatusOr<std::string> pem = client::ReadTextFile(*path);
      if (!pem.ok()) return Fail(pem.status(), kExitUsage);
      *field = *std::move(pem);
      options.use_tls = true;
    }
  }

  const std::vector<std::string>& positional = args.positional();
  if (positional.empty()) {
    if (help) {
      std::cout << GeneralHelp();
      return 0;
    }
    std::cerr << GeneralHelp();
    return kExitUsage;
  }
  bool help_command = positional[0] == "help";
  if (help_command) {
    if (positional.size() == 1) {
      std::cout << GeneralHelp();
      return 0;
    }
    args.DropPositional(1);
  }
  size_t name_words = 0;
  const Command* command = FindCommand(args.positional(), &name_words);
  if (command == nullptr) {
    return UsageError(absl::StrCat("unknown command \"", absl::StrJoin(args.positional(), " "),
                                   "\" (collide --help lists the commands)"));
  }
  if (help || help_command) {
    std::cout << CommandHelp(*command);
    return 0;
  }
  args.DropPositional(name_words);
  if (args.positional().size() != static_cast<size_t>(command->positional_count)) {
    return UsageError(
        absl::StrCat("usage: ", Usage(*command), " (collide help ", command->name, ")"));
  }
  for (const std::string& name : args.FlagNames()) {
    bool known = false;
    for (const FlagSpec& flag : command->flags) known = known || flag.name == name;
    if (!known) {
      return UsageError(absl::StrCat("--", name, ": not a flag of \"", command->name,
                                     "\" (collide help ", command->name, ")"));
    }
  }

  absl::StatusOr<std::unique_ptr<client::Client>> client = client::Client::Connect(options);
  if (!client.ok()) return Fail(client.status(), kExitUsage);
  Output out(json, &std::cout);
  CommandContext context{.args = args, .client = **client, .out = out};
  absl::Status status = command->run(context);
  if (!status.ok()) {
    // Problems with the command line are found before any call is made.
    bool usage = !args.ok() && status == args.status();
    return Fail(status, usage ? kExitUsage : kExitError);
  }
  return 0;
}

}  // namespace
}  // namespace collide::cli

int main(int argc, char** argv) {
  collide::client::GrpcRuntime grpc;
  return collide::cli::Run(argc, argv);
}
