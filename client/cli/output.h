#pragma once

#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "collide/v1/collide.pb.h"
#include "google/protobuf/message.h"

namespace collide::cli {

/// Where a command's result goes: human-readable text, or one line of JSON (the response message
/// in protobuf's JSON mapping, proto field names, zero values included) with `--json`.
class Output {
 public:
  /// Writes to `out` (not owned).
  Output(bool json, std::ostream* out) : json_(json), out_(out) {}

  /// Prints `message` as JSON, or `human` (a newline is added when missing).
  void Print(const google::protobuf::Message& message, absl::string_view human);
  /// Prints `text` as it is, in either mode (a newline is added when missing).
  void PrintText(absl::string_view text);
  /// True with `--json`.
  bool json() const { return json_; }

 private:
  bool json_;
  std::ostream* out_;
};

/// `text` as a JSON string literal, quotes included.
std::string JsonString(absl::string_view text);

/// The JSON text of `message` (one line).
std::string ToJson(const google::protobuf::Message& message);

// Human-readable pieces. Numbers use %g (six significant digits); -0 prints as 0 (in JSON too).

/// A number as %g, -0 as 0.
std::string FormatNumber(float value);
/// `n` and the noun in its number: `1 body`, `2 bodies`, `0 triangles` (`many` empty: `one` and
/// an s).
std::string Count(uint64_t n, absl::string_view one, absl::string_view many = "");
/// A vector as `(x, y, z)`.
std::string FormatVec3(const v1::Vec3& v);
/// `(x, y, z, w)`, or `identity` when absent.
std::string FormatRotation(const v1::Pose& pose);
/// `sphere radius 0.5`, `box half_extents (1, 1, 1)`, `capsule radius 0.5 half_height 1`.
std::string FormatShape(const v1::Shape& shape);
/// The lowercase name of a durability setting.
absl::string_view DurabilityName(v1::Durability durability);
/// One scene on several lines (name, version, counts, settings).
std::string FormatScene(const v1::SceneInfo& scene);
/// One scene on one line, for lists.
std::string FormatSceneLine(const v1::SceneInfo& scene);
/// One body on one line.
std::string FormatBody(const v1::Body& body);
/// A write's outcome: `version 3 (durable)`.
std::string FormatWrite(const v1::WriteResponse& write);

/// Which fields of a hit matter for a query kind.
enum class HitKind { kCast, kOverlap, kOverlapDetail, kPoint, kRegion };
/// A query's answer: `version V: N hits` then one line per hit.
std::string FormatHits(const v1::QueryResponse& response, HitKind kind);

}  // namespace collide::cli
