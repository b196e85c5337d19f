#include "base/program_flags.h"

#include <string>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace collide {

std::string FlagFileName(absl::string_view file, absl::string_view flags_file) {
  if (absl::EndsWith(file, flags_file) &&
      (file.size() == flags_file.size() || file[file.size() - flags_file.size() - 1] == '/')) {
    return std::string(flags_file);
  }
  if (absl::StartsWith(file, "absl/")) return std::string(file);
  if (const size_t at = file.rfind("/absl/"); at != absl::string_view::npos) {
    return std::string(file.substr(at + 1));
  }
  const size_t slash = file.rfind('/');
  return std::string(slash == absl::string_view::npos ? file : file.substr(slash + 1));
}

std::vector<char*> ParseProgramFlags(int argc, char** argv, const ProgramInfo& info) {
  // (--help prints the binary's name before it.)
  absl::SetProgramUsageMessage(info.usage);
  const std::string flags_file(info.flags_file);
  const std::string version = absl::StrCat(info.name, " ", info.version, "\n");
  absl::FlagsUsageConfig usage;
  // The names below are already normalised (FlagFileName).
  usage.contains_help_flags = [flags_file](absl::string_view file) { return file == flags_file; };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.normalize_filename = [flags_file](absl::string_view file) {
    return FlagFileName(file, flags_file);
  };
  usage.version_string = [version] { return version; };
  absl::SetFlagsUsageConfig(usage);
  return absl::ParseCommandLine(argc, argv);
}

}  // namespace collide
