#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collide/v1/collide.pb.h"

namespace collide::cli {

/// A command's positional words and flags, as CLI11 parsed them. Typed getters parse flag
/// values; the first problem is kept in status() and later getters return their defaults,
/// so a command reads all its flags and checks ok() once.
class Args {
 public:
  /// Args from a command line already parsed (by CLI11): the positional words, the flags given
  /// (a boolean one as "true" or "false") and the values of repeatable flags, in order.
  static Args FromParsed(std::vector<std::string> positional,
                         std::map<std::string, std::string, std::less<>> flags,
                         std::map<std::string, std::vector<std::string>, std::less<>> repeated);

  /// The positional words, in order.
  const std::vector<std::string>& positional() const { return positional_; }
  /// True when the flag was given (with or without a value).
  bool Has(absl::string_view name) const;

  /// A boolean flag: absent false; `--name`, `--name=true` true; `--name=false` false.
  bool Bool(absl::string_view name);
  /// Every value of a repeatable flag, in order; empty when absent.
  std::vector<std::string> Repeated(absl::string_view name) const;
  /// A text flag, or `fallback` when absent.
  std::string String(absl::string_view name, absl::string_view fallback = "");
  /// A float (finite or not: the server judges values), or `fallback` when absent.
  float Float(absl::string_view name, float fallback);
  /// An unsigned integer (decimal or 0x hex), or `fallback` when absent.
  uint64_t Uint64(absl::string_view name, uint64_t fallback);
  /// An unsigned 32-bit integer (decimal or 0x hex), or `fallback` when absent; an error above
  /// 4294967295.
  uint32_t Uint32(absl::string_view name, uint32_t fallback);
  /// A comma-separated list of unsigned integers; empty when absent.
  std::vector<uint64_t> Uint64List(absl::string_view name);
  /// `x,y,z`, or `fallback` when absent.
  v1::Vec3 Vec3(absl::string_view name, const v1::Vec3& fallback);
  /// `x,y,z`; records an error when absent.
  v1::Vec3 RequiredVec3(absl::string_view name);
  /// `x,y,z,w`, or nullopt when absent.
  std::optional<v1::Quat> Quat(absl::string_view name);
  /// Comma-separated floats, exactly `count` of them; nullopt when absent.
  std::optional<std::vector<float>> Floats(absl::string_view name, size_t count);
  /// Records an error unless the flag was given.
  void Require(absl::string_view name);

  /// Records `status` unless an earlier problem is already recorded.
  void Fail(absl::Status status);
  /// OK, or the first problem met by a getter.
  const absl::Status& status() const { return status_; }
  /// status().ok().
  bool ok() const { return status_.ok(); }

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string, std::less<>> flags_;
  std::map<std::string, std::vector<std::string>, std::less<>> repeated_;
  absl::Status status_;
};

}  // namespace collide::cli
