// collide: the command-line client of collide-server. Subcommands for every rpc; human-readable
// output, or JSON with --json. The command line is parsed with CLI11. Errors print
// `error: <CODE>: <message>` to stderr (with --json, {"error":{"code":..,"message":..}}) and exit 1
// (2 for a bad command line).

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/cli/args.h"
#include "client/cli/command.h"
#include "client/cli/output.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_runtime.h"
#include "collide/version.h"

namespace collide::cli {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr absl::string_view kDefaultAddress = "127.0.0.1:50051";
// The global flags that take a value (given as `--flag value`, the value is the next word).
constexpr absl::string_view kGlobalValueFlags[] = {"--address", "--token",    "--timeout",
                                                   "--tls_ca",  "--tls_cert", "--tls_key"};

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
      {"help", "", "this help (-h too); a command's: collide help COMMAND"},
      {"version", "", "the version, commit and build type"},
  };
  return flags;
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = [] {
    std::vector<Command> all;
    for (auto group : {SceneCommands, BodyCommands, QueryCommands, WatchCommands, InterestCommands,
                       ServerCommands, TransferCommands, MoveCommands, MeshCommands}) {
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
  if (flag.alias.empty()) return absl::StrCat(line, flag.help, "\n");
  return absl::StrCat(line, flag.help, " (also --", flag.alias, ")\n");
}

// The edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of two
// neighbours, each 1).
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// " (did you mean X?)" for the candidate nearest to `word`, when one is near enough: at most a
// third of the word's length away (at least 1, at most 3 edits); "" otherwise.
std::string Suggestion(absl::string_view word, const std::vector<std::string>& candidates) {
  const size_t allowed = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best.empty() ? "" : absl::StrCat(" (did you mean ", best, "?)");
}

// The flags `command` accepts (`--name`, aliases too), and the global ones.
std::vector<std::string> FlagNames(const Command* command) {
  std::vector<std::string> names;
  for (const FlagSpec& flag : GlobalFlags()) names.push_back(absl::StrCat("--", flag.name));
  if (command == nullptr) return names;
  for (const FlagSpec& flag : command->flags) {
    names.push_back(absl::StrCat("--", flag.name));
    if (!flag.alias.empty()) names.push_back(absl::StrCat("--", flag.alias));
  }
  return names;
}

// The commands, or the verbs of `group` ("scene create" for "scene").
std::vector<std::string> CommandNames(absl::string_view group = "") {
  std::vector<std::string> names;
  for (const Command& command : Commands()) {
    if (group.empty()) {
      names.push_back(std::string(command.name));
    } else if (absl::StartsWith(command.name, absl::StrCat(group, " "))) {
      names.push_back(std::string(command.name.substr(group.size() + 1)));
    }
  }
  if (group.empty()) names.push_back("help");
  return names;
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
      "Flags take the form --name=value or --name value (boolean flags: --name). Vectors are\n"
      "x,y,z; rotations x,y,z,w unit quaternions. With --json, errors are JSON on stderr too.\n"
      "\ncommands:\n";
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

// With --json on the command line, errors are JSON on stderr too.
bool json_errors = false;

int Fail(const absl::Status& status, int exit_code) {
  if (json_errors) {
    std::cerr << "{\"error\":{\"code\":" << JsonString(absl::StatusCodeToString(status.code()))
              << ",\"message\":" << JsonString(status.message()) << "}}\n";
  } else {
    std::cerr << "error: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
              << "\n";
  }
  return exit_code;
}

int UsageError(absl::string_view message) {
  return Fail(absl::InvalidArgumentError(message), kExitUsage);
}

std::string EnvOr(const char* name, absl::string_view fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::string(fallback);
}

// The verbs of a command group ("scene", "body").
std::string GroupHelp(absl::string_view group) {
  std::string text = absl::StrCat("usage: collide ", group, " VERB [ARGS] [flags]\n\nverbs:\n");
  for (const Command& command : Commands()) {
    if (!absl::StartsWith(command.name, absl::StrCat(group, " "))) continue;
    std::string line = absl::StrCat("  ", command.name, " ", command.positional);
    line.resize(std::max<size_t>(line.size() + 2, 26), ' ');
    absl::StrAppend(&text, line, command.summary, "\n");
  }
  absl::StrAppend(&text, "\nA verb's flags: collide ", group, " VERB --help\n");
  return text;
}

// One subcommand's CLI11 app and where its values land.
struct Leaf {
  const Command* command = nullptr;
  CLI::App* app = nullptr;
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::map<std::string, bool> booleans;
  std::map<std::string, std::vector<std::string>> repeated;
};

// The first word CLI11 left over on `app` or the subcommands it ran, or "".
std::string FirstLeftover(const CLI::App& app) {
  std::vector<std::string> left = app.remaining();
  if (!left.empty()) return left.front();
  for (const CLI::App* sub : app.get_subcommands()) {
    std::string word = FirstLeftover(*sub);
    if (!word.empty()) return word;
  }
  return "";
}

int Run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view word = argv[i];
    if (word == "--") break;
    if (word == "--json" || word == "--json=true" || word == "--json=1") json_errors = true;
  }

  // `collide help [COMMAND...]`: the first word that is not a global flag (or its value).
  std::vector<std::string> help_words;
  bool help_command = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view word = argv[i];
    if (!absl::StartsWith(word, "-")) {
      if (help_command) {
        help_words.emplace_back(word);
      } else if (word == "help") {
        help_command = true;
      } else {
        break;
      }
    } else if (!help_command &&
               std::find(std::begin(kGlobalValueFlags), std::end(kGlobalValueFlags), word) !=
                   std::end(kGlobalValueFlags)) {
      ++i;  // its value
    }
  }
  if (help_command) {
    if (help_words.empty()) {
      std::cout << GeneralHelp();
      return 0;
    }
    std::string name = absl::StrJoin(help_words, " ");
    for (const Command& command : Commands()) {
      if (command.name == name) {
        std::cout << CommandHelp(command);
        return 0;
      }
      if (absl::StartsWith(command.name, absl::StrCat(name, " "))) {
        std::cout << GroupHelp(name);
        return 0;
      }
    }
    return UsageError(absl::StrCat("unknown command \"", name, "\"",
                                   Suggestion(name, CommandNames()),
                                   " (collide --help lists the commands)"));
  }

  CLI::App app("collide: the command-line client of collide-server.", "collide");
  app.set_help_flag();
  app.allow_extras();
  bool help = false;
  bool version = false;
  bool json = false;
  bool tls = false;
  std::string address = EnvOr("COLLIDE_ADDRESS", kDefaultAddress);
  std::string token = EnvOr("COLLIDE_TOKEN", "");
  std::string timeout = "10";
  std::string tls_files[3];
  app.add_flag("-h,--help", help);
  app.add_flag("--version", version);
  app.add_flag("--json", json);
  app.add_flag("--tls", tls);
  app.add_option("--address", address);
  app.add_option("--token", token);
  app.add_option("--timeout", timeout);
  app.add_option("--tls_ca", tls_files[0]);
  app.add_option("--tls_cert", tls_files[1]);
  app.add_option("--tls_key", tls_files[2]);

  std::map<std::string, CLI::App*> groups;
  std::vector<std::unique_ptr<Leaf>> leaves;
  for (const Command& command : Commands()) {
    std::vector<std::string> words = absl::StrSplit(command.name, ' ');
    CLI::App* parent = &app;
    if (words.size() == 2) {
      CLI::App*& group = groups[words[0]];
      if (group == nullptr) {
        group = app.add_subcommand(words[0]);
        group->set_help_flag();
        group->allow_extras()->fallthrough();
      }
      parent = group;
    }
    auto leaf = std::make_unique<Leaf>();
    leaf->command = &command;
    leaf->app = parent->add_subcommand(words.back(), std::string(command.summary));
    leaf->app->set_help_flag();
    leaf->app->allow_extras()->fallthrough();
    if (command.positional_count > 0) {
      // CLI11 names cannot hold spaces ("SCENE FILE").
      leaf->app->add_option(absl::StrReplaceAll(command.positional, {{" ", "_"}}),
                            leaf->positional);
    }
    for (const FlagSpec& flag : command.flags) {
      std::string name = absl::StrCat("--", flag.name);
      if (!flag.alias.empty()) absl::StrAppend(&name, ",--", flag.alias);
      std::string key(flag.name);
      if (flag.repeated) {
        leaf->app->add_option(name, leaf->repeated[key])->allow_extra_args(false);
      } else if (flag.value.empty()) {
        leaf->app->add_flag(name, leaf->booleans[key]);
      } else {
        leaf->app->add_option(name, leaf->values[key]);
      }
    }
    leaves.push_back(std::move(leaf));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return UsageError(error.what());
  }

  if (version) {
    std::cout << "collide " << kVersionLine << "\n";
    return 0;
  }
  const Leaf* chosen = nullptr;
  for (const std::unique_ptr<Leaf>& leaf : leaves) {
    if (leaf->app->parsed()) chosen = leaf.get();
  }
  if (chosen == nullptr) {
    for (const auto& [name, group] : groups) {
      if (!group->parsed()) continue;
      std::string word = FirstLeftover(app);
      if (!word.empty() && !absl::StartsWith(word, "-")) {
        return UsageError(absl::StrCat("unknown command \"", name, " ", word, "\"",
                                       Suggestion(word, CommandNames(name)), " (collide ", name,
                                       " lists its verbs)"));
      }
      if (help) {
        std::cout << GroupHelp(name);
        return 0;
      }
      std::cerr << GroupHelp(name);
      return kExitUsage;
    }
    std::string word = FirstLeftover(app);
    if (!word.empty() && !absl::StartsWith(word, "-")) {
      return UsageError(absl::StrCat("unknown command \"", word, "\"",
                                     Suggestion(word, CommandNames()),
                                     " (collide --help lists the commands)"));
    }
    if (!word.empty()) {
      std::string name(word.substr(0, word.find('=')));
      return UsageError(absl::StrCat(name, ": not a global flag",
                                     Suggestion(name, FlagNames(nullptr)), " (collide --help)"));
    }
    if (help) {
      std::cout << GeneralHelp();
      return 0;
    }
    std::cerr << GeneralHelp();
    return kExitUsage;
  }
  const Command& command = *chosen->command;
  if (help) {
    std::cout << CommandHelp(command);
    return 0;
  }
  std::string leftover = FirstLeftover(app);
  if (!leftover.empty()) {
    if (absl::StartsWith(leftover, "-")) {
      std::string name(leftover.substr(0, leftover.find('=')));
      return UsageError(absl::StrCat(name, ": not a flag of \"", command.name, "\"",
                                     Suggestion(name, FlagNames(&command)), " (collide help ",
                                     command.name, ")"));
    }
    return UsageError(absl::StrCat("unexpected argument \"", leftover, "\"; usage: ",
                                   Usage(command), " (collide help ", command.name, ")"));
  }
  if (chosen->positional.size() != static_cast<size_t>(command.positional_count)) {
    return UsageError(
        absl::StrCat("usage: ", Usage(command), " (collide help ", command.name, ")"));
  }

  client::ClientOptions options;
  options.address = address;
  options.bearer_token = token;
  float timeout_seconds = 0.0f;
  if (!absl::SimpleAtof(timeout, &timeout_seconds) || !(timeout_seconds > 0.0f) ||
      timeout_seconds > 1e6f) {
    return UsageError(
        absl::StrCat("--timeout: expected seconds (> 0, at most 1000000), got \"", timeout, "\""));
  }
  options.default_deadline = absl::Seconds(timeout_seconds);
  options.stream_deadline = absl::Seconds(timeout_seconds);
  options.use_tls = tls;
  std::string* pems[3] = {&options.tls_root_cert_pem, &options.tls_client_cert_pem,
                          &options.tls_client_key_pem};
  const char* tls_names[3] = {"--tls_ca", "--tls_cert", "--tls_key"};
  for (int i = 0; i < 3; ++i) {
    if (app.count(tls_names[i]) == 0) continue;
    absl::StatusOr<std::string> pem = client::ReadTextFile(tls_files[i]);
    if (!pem.ok()) return Fail(pem.status(), kExitUsage);
    *pems[i] = *std::move(pem);
    options.use_tls = true;
  }

  std::map<std::string, std::string, std::less<>> flags;
  std::map<std::string, std::vector<std::string>, std::less<>> repeated;
  for (const FlagSpec& flag : command.flags) {
    std::string key(flag.name);
    if (chosen->app->count(absl::StrCat("--", flag.name)) == 0) continue;
    if (flag.repeated) {
      repeated[key] = chosen->repeated.at(key);
    } else if (flag.value.empty()) {
      flags[key] = chosen->booleans.at(key) ? "true" : "false";
    } else {
      flags[key] = chosen->values.at(key);
    }
  }
  Args args = Args::FromParsed(chosen->positional, std::move(flags), std::move(repeated));

  absl::StatusOr<std::unique_ptr<client::Client>> client = client::Client::Connect(options);
  if (!client.ok()) return Fail(client.status(), kExitUsage);
  Output out(json, &std::cout);
  CommandContext context{.args = args, .client = **client, .out = out};
  absl::Status status = command.run(context);
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
