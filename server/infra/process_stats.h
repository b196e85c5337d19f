#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace collide {

/// The resident memory of this process (the VmRSS line of /proc/self/status), in bytes; 0 where
/// the system does not report it.
uint64_t ResidentMemoryBytes();

/// The value of a `<field>: <n> kB` line of a /proc/<pid>/status text, in bytes (`field` without
/// its colon); 0 when the line is absent or malformed.
uint64_t StatusFieldBytes(absl::string_view status_text, absl::string_view field);

}  // namespace collide
