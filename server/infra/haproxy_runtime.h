#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

/// Sends one command (a line without its newline) to HAProxy's runtime API at `address`
/// (`host:port` of a `stats socket ipv4@HOST:PORT level admin`) and returns HAProxy's answer
/// (the socket is closed after one command). UNAVAILABLE `router_admin: ...` when it cannot
/// connect, or send and read the answer, within `timeout`; INVALID_ARGUMENT for a command that
/// holds a newline.
absl::StatusOr<std::string> HaproxyCommand(const std::string& address, absl::string_view command,
                                           std::chrono::milliseconds timeout);

/// The entries (key, value) of a `show map <map>` answer: one `<pointer> <key> <value>` per line;
/// other lines are skipped.
std::vector<std::pair<std::string, std::string>> ParseHaproxyMap(absl::string_view answer);

/// HAProxy's answer to a command that changes something: empty (or blank) when it did; the
/// answer as the error otherwise (`entry not found.`, `Unknown map identifier ...`).
absl::Status HaproxyAnswerStatus(absl::string_view command, absl::string_view answer);

}  // namespace collide
