// collide interest.

#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/command.h"
#include "client/cpp/interest_stream.h"

namespace collide::cli {
namespace {

absl::Status ObserverError(absl::string_view text, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("--observer: ", reason, " in \"", text,
                                                 "\" (expected ID:ENTER[,LEAVE][@X,Y,Z][/BODY])"));
}

// Comma-separated finite numbers, 1 to `most` of them.
bool ParseFloats(absl::string_view text, size_t least, size_t most, std::vector<float>* out) {
  out->clear();
  for (absl::string_view word : absl::StrSplit(text, ',')) {
    float value = 0.0f;
    if (!absl::SimpleAtof(word, &value) || !std::isfinite(value)) return false;
    out->push_back(value);
  }
  return out->size() >= least && out->size() <= most;
}

bool ParseId(absl::string_view text, uint64_t* id) {
  return !text.empty() && text[0] != '-' && text[0] != '+' && absl::SimpleAtoi(text, id);
}

// `ID:ENTER[,LEAVE][@X,Y,Z][/BODY]`: fixed at X,Y,Z, or riding BODY (X,Y,Z then in its frame).
absl::StatusOr<v1::Observer> ParseObserver(absl::string_view text, uint32_t max_relevant) {
  std::vector<absl::string_view> id_rest = absl::StrSplit(text, absl::MaxSplits(':', 1));
  v1::Observer observer;
  uint64_t id = 0;
  if (id_rest.size() != 2 || !ParseId(id_rest[0], &id)) {
    return ObserverError(text, "no ID: an unsigned integer");
  }
  observer.set_id(id);
  observer.set_max_relevant(max_relevant);
  std::vector<absl::string_view> rest_body = absl::StrSplit(id_rest[1], absl::MaxSplits('/', 1));
  if (rest_body.size() == 2) {
    uint64_t body = 0;
    if (!ParseId(rest_body[1], &body)) return ObserverError(text, "a bad BODY");
    observer.set_attached_to(body);
  }
  std::vector<absl::string_view> radii_at = absl::StrSplit(rest_body[0], absl::MaxSplits('@', 1));
  std::vector<float> values;
  if (radii_at.size() == 2) {
    if (!ParseFloats(radii_at[1], 3, 3, &values)) return ObserverError(text, "a bad position");
    v1::Vec3* position = observer.mutable_pose()->mutable_position();
    position->set_x(values[0]);
    position->set_y(values[1]);
    position->set_z(values[2]);
  }
  if (!ParseFloats(radii_at[0], 1, 2, &values)) return ObserverError(text, "bad radii");
  observer.set_enter_radius(values[0]);
  if (values.size() == 2) observer.set_leave_radius(values[1]);
  return observer;
}

std::string FormatIds(const google::protobuf::RepeatedField<uint64_t>& ids) {
  return ids.empty() ? "none" : absl::StrJoin(ids, ", ");
}

std::string FormatSnapshot(const v1::InterestSnapshot& snapshot) {
  std::string text = absl::StrCat(snapshot.resync() ? "resync" : "snapshot", " version ",
                                  snapshot.version(), " tick ", snapshot.tick(), "\n");
  for (const v1::RelevantSet& set : snapshot.sets()) {
    absl::StrAppend(
        &text, "  observer ", set.observer_id(), ": ",
        set.body_ids().empty() ? "empty" : absl::StrCat("bodies ", FormatIds(set.body_ids())),
        "\n");
  }
  return text;
}

absl::Status Interest(CommandContext& c) {
  Args& args = c.args;
  const uint32_t max_relevant = args.Uint32("max", 0);
  std::vector<v1::Observer> observers;
  for (const std::string& text : args.Repeated("observer")) {
    absl::StatusOr<v1::Observer> observer = ParseObserver(text, max_relevant);
    if (!observer.ok()) {
      args.Fail(observer.status());
      break;
    }
    observers.push_back(*std::move(observer));
  }
  const uint64_t count = args.Uint64("count", 0);
  if (args.ok() && observers.empty()) {
    args.Fail(absl::InvalidArgumentError("interest: give at least one --observer"));
  }
  if (!args.ok()) return args.status();
  // Streams until interrupted; a break reopens the stream (the next message is a snapshot).
  absl::StatusOr<std::unique_ptr<client::InterestStream>> interest =
      c.client.OpenInterest(args.positional()[0], std::move(observers));
  if (!interest.ok()) return interest.status();
  uint64_t deltas = 0;
  while (count == 0 || deltas < count) {
    absl::StatusOr<v1::InterestResponse> message = (*interest)->Read();
    if (!message.ok()) return message.status();
    if (message->has_update()) {
      const v1::InterestUpdate& update = message->update();
      std::string text;
      for (const v1::ObserverDelta& delta : update.deltas()) {
        if (count != 0 && deltas == count) break;
        ++deltas;
        absl::StrAppend(&text, "version ", update.version(), " tick ", update.tick(), "  observer ",
                        delta.observer_id(), delta.full() ? "  full " : "  entered ",
                        FormatIds(delta.entered()), "  left ", FormatIds(delta.left()), "\n");
      }
      c.out.Print(*message, text);
    } else {
      c.out.Print(*message, FormatSnapshot(message->snapshot()));
    }
    std::cout.flush();
  }
  (*interest)->Cancel();
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> InterestCommands() {
  return {
      {.name = "interest",
       .positional = "SCENE",
       .positional_count = 1,
       .summary = "Prints observers' relevant sets, then their deltas as bodies move (Interest).",
       .flags = {{"observer", "ID:ENTER[,LEAVE][@X,Y,Z][/BODY]",
                  "an observer (repeatable): 1:30,35@0,0,0 fixed; 2:30,35/7 riding body 7",
                  /*repeated=*/true},
                 {"max", "N",
                  "at most N bodies per observer, the nearest (default 0: the "
                  "server's limit)"},
                 {"count", "N", "stop after N deltas (default 0: until interrupted)"}},
       .run = Interest},
  };
}

}  // namespace collide::cli
