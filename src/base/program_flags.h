#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace collide {

/// How a binary introduces itself on --help and --version.
struct ProgramInfo {
  /// The binary's name: the first word of --version and of --help.
  absl::string_view name;
  /// What it does, one sentence (--help's first line, after the name).
  absl::string_view usage;
  /// The file that defines its flags, from the source tree's root (`server/main.cc`): --help
  /// lists that file's flags under this name (never the build's path to it).
  absl::string_view flags_file;
  /// The rest of --version's line (collide/version.h's kVersionLine).
  absl::string_view version;
};

/// The flag set-up every collide binary shares: the usage message, --version, --help (and
/// --helpshort) listing `info.flags_file`'s flags under its source-relative name, then Abseil's
/// parse of the command line (which exits on --help, --version or a value a flag refuses).
/// Returns the positional arguments (argv[0] first).
std::vector<char*> ParseProgramFlags(int argc, char** argv, const ProgramInfo& info);

/// The name --help shows for a flag defined in `file` (a path as the compiler saw it: absolute,
/// or relative to the build directory): the part from the source tree's top-level folder on
/// (`server/main.cc`), or from `absl/` for Abseil's own flags; else the file's name alone.
std::string FlagFileName(absl::string_view file, absl::string_view flags_file);

}  // namespace collide
