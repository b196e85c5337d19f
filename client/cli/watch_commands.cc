// collide watch.

#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/cli/command.h"
#include "client/cpp/watch_stream.h"

namespace collide::cli {
namespace {

absl::Status FenceError(absl::string_view text, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("--fence: ", reason, " in \"", text,
                                                 "\" (expected ID:sphere=R[@X,Y,Z], "
                                                 "ID:box=HX,HY,HZ[@X,Y,Z] or "
                                                 "ID:capsule=R,HALF_HEIGHT[@X,Y,Z])"));
}

// Comma-separated finite numbers, exactly `count` of them.
bool ParseFloats(absl::string_view text, size_t count, std::vector<float>* out) {
  out->clear();
  for (absl::string_view word : absl::StrSplit(text, ',')) {
    float value = 0.0f;
    if (!absl::SimpleAtof(word, &value) || !std::isfinite(value)) return false;
    out->push_back(value);
  }
  return out->size() == count;
}

// `ID:SHAPE[@X,Y,Z]`.
absl::StatusOr<v1::Fence> ParseFence(absl::string_view text) {
  std::vector<absl::string_view> id_rest = absl::StrSplit(text, absl::MaxSplits(':', 1));
  v1::Fence fence;
  uint64_t id = 0;
  if (id_rest.size() != 2 || !absl::SimpleAtoi(id_rest[0], &id) || id_rest[0].empty() ||
      id_rest[0][0] == '-') {
    return FenceError(text, "no ID: an unsigned integer");
  }
  fence.set_id(id);
  std::vector<absl::string_view> shape_at = absl::StrSplit(id_rest[1], absl::MaxSplits('@', 1));
  std::vector<float> values;
  if (shape_at.size() == 2) {
    if (!ParseFloats(shape_at[1], 3, &values)) return FenceError(text, "a bad position");
    v1::Vec3* position = fence.mutable_pose()->mutable_position();
    position->set_x(values[0]);
    position->set_y(values[1]);
    position->set_z(values[2]);
  }
  std::vector<absl::string_view> kind_size = absl::StrSplit(shape_at[0], absl::MaxSplits('=', 1));
  if (kind_size.size() != 2) return FenceError(text, "no shape");
  if (kind_size[0] == "sphere" && ParseFloats(kind_size[1], 1, &values)) {
    fence.mutable_shape()->mutable_sphere()->set_radius(values[0]);
  } else if (kind_size[0] == "box" && ParseFloats(kind_size[1], 3, &values)) {
    v1::Vec3* half = fence.mutable_shape()->mutable_box()->mutable_half_extents();
    half->set_x(values[0]);
    half->set_y(values[1]);
    half->set_z(values[2]);
  } else if (kind_size[0] == "capsule" && ParseFloats(kind_size[1], 2, &values)) {
    fence.mutable_shape()->mutable_capsule()->set_radius(values[0]);
    fence.mutable_shape()->mutable_capsule()->set_half_height(values[1]);
  } else {
    return FenceError(text, "a bad shape");
  }
  return fence;
}

std::string FormatEvent(const v1::WatchEvent& event) {
  switch (event.kind()) {
    case v1::WatchEvent::KIND_ENTER:
      return absl::StrCat(
          "enter  fence ", event.fence_id(), "  body ", event.body_id(),
          event.has_point() ? absl::StrCat("  point ", FormatVec3(event.point())) : "");
    case v1::WatchEvent::KIND_EXIT:
      return absl::StrCat("exit  fence ", event.fence_id(), "  body ", event.body_id());
    case v1::WatchEvent::KIND_CONTACT_BEGIN:
      return absl::StrCat("contact begin  watch ", event.contact_id(), "  bodies ", event.body_id(),
                          ", ", event.other_body_id());
    case v1::WatchEvent::KIND_CONTACT_END:
      return absl::StrCat("contact end  watch ", event.contact_id(), "  bodies ", event.body_id(),
                          ", ", event.other_body_id());
    default:
      return absl::StrCat("event kind ", static_cast<int>(event.kind()));
  }
}

std::string FormatSnapshot(const v1::WatchSnapshot& snapshot) {
  std::string text = absl::StrCat(snapshot.resync() ? "resync" : "snapshot", " version ",
                                  snapshot.version(), " tick ", snapshot.tick(), "\n");
  for (const v1::FenceContents& fence : snapshot.fences()) {
    absl::StrAppend(&text, "  fence ", fence.fence_id(), ": ",
                    fence.body_ids().empty()
                        ? "empty"
                        : absl::StrCat("bodies ", absl::StrJoin(fence.body_ids(), ", ")),
                    "\n");
  }
  for (const v1::ContactPair& pair : snapshot.contacts()) {
    absl::StrAppend(&text, "  contact watch ", pair.contact_id(), ": bodies ", pair.body_id(), ", ",
                    pair.other_body_id(), "\n");
  }
  return text;
}

absl::Status Watch(CommandContext& c) {
  Args& args = c.args;
  v1::WatchRequest request;
  request.set_scene(args.positional()[0]);
  for (const std::string& text : args.Repeated("fence")) {
    absl::StatusOr<v1::Fence> fence = ParseFence(text);
    if (!fence.ok()) {
      args.Fail(fence.status());
      break;
    }
    *request.add_fences() = *std::move(fence);
  }
  for (uint64_t id : args.Uint64List("contact")) request.add_contacts()->set_id(id);
  uint64_t count = args.Uint64("count", 0);
  if (args.ok() && request.fences_size() == 0 && request.contacts_size() == 0) {
    args.Fail(absl::InvalidArgumentError("watch: give at least one --fence or --contact"));
  }
  if (!args.ok()) return args.status();
  // Streams until interrupted: no deadline.
  absl::StatusOr<std::unique_ptr<client::WatchStream>> watch =
      c.client.Watch(request, {.deadline = absl::ZeroDuration()});
  if (!watch.ok()) return watch.status();
  uint64_t events = 0;
  while (count == 0 || events < count) {
    absl::StatusOr<v1::WatchResponse> message = (*watch)->Read();
    if (!message.ok()) return message.status();
    if (message->has_update()) {
      const v1::WatchUpdate& update = message->update();
      std::string text;
      for (const v1::WatchEvent& event : update.events()) {
        if (count != 0 && events == count) break;
        ++events;
        absl::StrAppend(&text, "version ", update.version(), " tick ", update.tick(), "  ",
                        FormatEvent(event), "\n");
      }
      c.out.Print(*message, text);
    } else {
      c.out.Print(*message, FormatSnapshot(message->snapshot()));
    }
    std::cout.flush();
  }
  (*watch)->Cancel();
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> WatchCommands() {
  return {
      {.name = "watch",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Prints a watch's snapshot, then its events as they come (Watch).",
       .flags = {{"fence", "ID:SHAPE[@X,Y,Z]",
                  "a fence (repeatable): 1:sphere=2@0,0,0, 2:box=1,1,1, 3:capsule=0.5,1@0,0,5",
                  /*repeated=*/true},
                 {"contact", "ID,...", "contact watches (all categories) with these ids"},
                 {"count", "N", "stop after N events (default 0: until interrupted)"}},
       .run = Watch},
  };
}

}  // namespace collide::cli
