#include "client/cli/output.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

namespace collide::cli {
namespace {

// -0 prints as 0.
std::string Num(float value) { return absl::StrFormat("%g", value == 0.0f ? 0.0f : value); }

// Replaces every -0 float or double in `message` (and the messages inside it) by +0.
void ClearNegativeZeros(google::protobuf::Message& message) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    using google::protobuf::FieldDescriptor;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_FLOAT:
        if (field->is_repeated()) {
          for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
            if (reflection->GetRepeatedFloat(message, field, i) == 0.0f) {
              reflection->SetRepeatedFloat(&message, field, i, 0.0f);
            }
          }
        } else if (reflection->GetFloat(message, field) == 0.0f) {
          reflection->SetFloat(&message, field, 0.0f);
        }
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        if (field->is_repeated()) {
          for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
            if (reflection->GetRepeatedDouble(message, field, i) == 0.0) {
              reflection->SetRepeatedDouble(&message, field, i, 0.0);
            }
          }
        } else if (reflection->GetDouble(message, field) == 0.0) {
          reflection->SetDouble(&message, field, 0.0);
        }
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (field->is_repeated()) {
          for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
            ClearNegativeZeros(*reflection->MutableRepeatedMessage(&message, field, i));
          }
        } else {
          ClearNegativeZeros(*reflection->MutableMessage(&message, field));
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::unique_ptr<google::protobuf::Message> copy(message.New());
  copy->CopyFrom(message);
  ClearNegativeZeros(*copy);
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(*copy, &text, options).ok()) {
    // Only non-finite floats fail to print; the server never returns them.
    return "{}";
  }
  return text;
}

void Output::Print(const google::protobuf::Message& message, absl::string_view human) {
  if (json_) {
    *out_ << ToJson(message) << "\n";
    return;
  }
  *out_ << human;
  if (human.empty() || human.back() != '\n') *out_ << "\n";
}

void Output::PrintText(absl::string_view text) {
  *out_ << text;
  if (text.empty() || text.back() != '\n') *out_ << "\n";
}

std::string JsonString(absl::string_view text) {
  std::string quoted = "\"";
  for (char ch : text) {
    switch (ch) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          absl::StrAppend(&quoted, absl::StrFormat("\\u%04x", static_cast<unsigned char>(ch)));
        } else {
          quoted += ch;
        }
    }
  }
  quoted += '"';
  return quoted;
}

std::string FormatNumber(float value) { return Num(value); }

std::string Count(uint64_t n, absl::string_view one, absl::string_view many) {
  if (n == 1) return absl::StrCat(n, " ", one);
  if (many.empty()) return absl::StrCat(n, " ", one, "s");
  return absl::StrCat(n, " ", many);
}

std::string FormatVec3(const v1::Vec3& v) {
  return absl::StrCat("(", Num(v.x()), ", ", Num(v.y()), ", ", Num(v.z()), ")");
}

std::string FormatRotation(const v1::Pose& pose) {
  if (!pose.has_rotation()) return "identity";
  const v1::Quat& q = pose.rotation();
  return absl::StrCat("(", Num(q.x()), ", ", Num(q.y()), ", ", Num(q.z()), ", ", Num(q.w()), ")");
}

std::string FormatShape(const v1::Shape& shape) {
  switch (shape.shape_case()) {
    case v1::Shape::kSphere:
      return absl::StrCat("sphere radius ", Num(shape.sphere().radius()));
    case v1::Shape::kBox:
      return absl::StrCat("box half_extents ", FormatVec3(shape.box().half_extents()));
    case v1::Shape::kCapsule:
      return absl::StrCat("capsule radius ", Num(shape.capsule().radius()), " half_height ",
                          Num(shape.capsule().half_height()));
    case v1::Shape::kMesh:
      return absl::StrCat("mesh ", shape.mesh().asset(), " scale ",
                          Num(shape.mesh().has_scale() ? shape.mesh().scale() : 1.0f));
    case v1::Shape::kHeightfield:
      return absl::StrCat(
          "heightfield ", shape.heightfield().asset(), " scale ",
          Num(shape.heightfield().has_scale() ? shape.heightfield().scale() : 1.0f));
    case v1::Shape::SHAPE_NOT_SET:
      break;
  }
  return "no shape";
}

absl::string_view DurabilityName(v1::Durability durability) {
  switch (durability) {
    case v1::DURABILITY_NONE:
      return "none";
    case v1::DURABILITY_PERIODIC:
      return "periodic";
    case v1::DURABILITY_ALWAYS:
      return "always";
    case v1::DURABILITY_REPLICATED:
      return "replicated";
    default:
      return "default";
  }
}

std::string FormatScene(const v1::SceneInfo& scene) {
  const v1::SceneStats& stats = scene.stats();
  const v1::SceneOptions& options = scene.options();
  std::string text = absl::StrCat("scene ", scene.name(), "\n");
  absl::StrAppend(&text, "  version      ", stats.version(), "\n");
  absl::StrAppend(&text, "  bodies       ", stats.body_count(), " (", stats.static_body_count(),
                  " static)\n");
  absl::StrAppend(&text, "  tree height  ", stats.tree_height(), "\n");
  absl::StrAppend(&text, "  memory       ", stats.memory_bytes(), " bytes\n");
  absl::StrAppend(&text, "  durability   ", DurabilityName(options.durability()), "\n");
  absl::StrAppend(&text, "  max bodies   ", options.max_bodies(), "\n");
  absl::StrAppend(&text, "  fat margin   ", Num(options.fat_margin()), "\n");
  if (scene.has_replication()) {
    const v1::SceneReplication& r = scene.replication();
    absl::StrAppend(&text, "  owner        ", r.owner().empty() ? "(none known)" : r.owner(),
                    r.owned() ? " (this server)" : "", ", epoch ", r.epoch(), "\n");
    absl::StrAppend(&text, "  replica      ", r.state(), ", through sequence ",
                    r.applied_sequence(), ", behind ", r.lag_sequences(), " (", r.lag_ms(),
                    " ms)\n");
  }
  return text;
}

std::string FormatSceneLine(const v1::SceneInfo& scene) {
  std::string line =
      absl::StrCat(scene.name(), "  version ", scene.stats().version(), "  bodies ",
                   scene.stats().body_count(), " (", scene.stats().static_body_count(),
                   " static)  durability ", DurabilityName(scene.options().durability()));
  if (scene.has_replication()) {
    absl::StrAppend(
        &line, "  ", scene.replication().owned() ? "owner" : scene.replication().state(),
        scene.replication().owned() ? "" : absl::StrCat(" of ", scene.replication().owner()));
  }
  return line;
}

std::string FormatBody(const v1::Body& body) {
  return absl::StrFormat(
      "body %d  %s  position %s  rotation %s  category 0x%x  mask 0x%x  %s  user_data %d",
      body.id(), FormatShape(body.shape()), FormatVec3(body.pose().position()),
      FormatRotation(body.pose()), body.has_category() ? body.category() : 1u,
      body.has_mask() ? body.mask() : ~0u,
      body.kind() == v1::BODY_KIND_STATIC ? "static" : "dynamic", body.user_data());
}

std::string FormatWrite(const v1::WriteResponse& write) {
  return absl::StrCat("version ", write.version(), write.durable() ? " (durable)" : "");
}

std::string FormatHits(const v1::QueryResponse& response, HitKind kind) {
  int count = response.hits_size();
  std::string text =
      absl::StrCat("version ", response.version(), ": ", count == 0 ? "no" : absl::StrCat(count),
                   " hit", count == 1 ? "" : "s", response.truncated() ? " (truncated)" : "", "\n");
  for (const v1::Hit& hit : response.hits()) {
    absl::StrAppend(&text, "  body ", hit.body_id());
    // A hit on a mesh or heightfield body names its triangle (and a ray's back face).
    if (hit.has_triangle()) absl::StrAppend(&text, "  triangle ", hit.triangle());
    if (hit.back_face()) absl::StrAppend(&text, "  back_face");
    switch (kind) {
      case HitKind::kCast:
        absl::StrAppend(&text, "  distance ", Num(hit.distance()), "  point ",
                        FormatVec3(hit.point()), "  normal ", FormatVec3(hit.normal()),
                        hit.start_overlapping() ? "  start_overlapping" : "");
        break;
      case HitKind::kOverlapDetail:
        absl::StrAppend(&text, "  depth ", Num(hit.depth()), "  point ", FormatVec3(hit.point()),
                        "  normal ", FormatVec3(hit.normal()));
        break;
      case HitKind::kPoint:
        absl::StrAppend(&text, "  distance ", Num(hit.distance()), "  point ",
                        FormatVec3(hit.point()));
        break;
      case HitKind::kOverlap:
      case HitKind::kRegion:
        break;
    }
    absl::StrAppend(&text, "\n");
  }
  return text;
}

}  // namespace collide::cli
