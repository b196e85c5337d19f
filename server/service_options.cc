#include "server/service_options.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "server/infra/listen_address.h"

namespace collide {
namespace {

template <typename T>
absl::Status CheckRange(absl::string_view, const T&, AnyValue) {
  return absl::OkStatus();
}

template <typename T, typename R>
absl::Status CheckRange(absl::string_view name, const T& value, ValueRange<R> range) {
  bool inside = false;
  if constexpr (std::is_floating_point_v<T>) {
    inside = value >= range.min && value <= range.max;  // false for NaN
  } else {
    inside = !std::cmp_less(value, range.min) && !std::cmp_greater(value, range.max);
  }
  if (inside) return absl::OkStatus();
  if constexpr (std::is_floating_point_v<T>) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %.15g is not from %.15g to %.15g", name, value, range.min, range.max));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", value, " is not from ", range.min, " to ", range.max));
  }
}

// An option's value as its flag would spell it.
std::string Spell(const std::string& value) { return value.empty() ? "\"\"" : value; }
std::string Spell(bool value) { return value ? "true" : "false"; }
template <typename T>
std::string Spell(const T& value) {
  if constexpr (std::is_floating_point_v<T>) {
    return absl::StrFormat("%.15g", value);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return absl::StrCat(value);
  } else {
    return AbslUnparseFlag(value);
  }
}

// `names[i]` is the name of the enum value i; parses one into `*value`, or says which exist.
template <typename E, size_t N>
bool ParseName(absl::string_view text, const absl::string_view (&names)[N], E* value,
               std::string* error) {
  for (size_t i = 0; i < N; ++i) {
    if (text == names[i]) {
      *value = static_cast<E>(i);
      return true;
    }
  }
  std::string list;
  for (size_t i = 0; i < N; ++i) {
    absl::StrAppend(&list, i == 0 ? "" : i + 1 == N ? " or " : ", ", names[i]);
  }
  *error = absl::StrCat("must be ", list);
  return false;
}

constexpr absl::string_view kRecoveryNames[] = {"strict", "skip"};

// A value sent as one word of a line (an address, a map's file name): 1 to 256 printable ASCII
// characters without spaces.
absl::Status CheckAddressWord(absl::string_view flag, absl::string_view value) {
  if (value.empty() || value.size() > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": has 1 to 256 characters, got ", value.size()));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c <= 0x20 || c >= 0x7F) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": character ", i, " is a space, a control character or not ASCII"));
    }
  }
  return absl::OkStatus();
}

// A comma-separated list of words, none empty, none twice.
absl::StatusOr<std::vector<std::string>> ParseList(absl::string_view flag, absl::string_view list) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    COLLIDE_RETURN_IF_ERROR(CheckAddressWord(flag, item));
    if (std::find(out.begin(), out.end(), item) != out.end()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": \"", item, "\" is named twice"));
    }
    out.emplace_back(item);
  }
  if (out.size() > 64) return absl::InvalidArgumentError(absl::StrCat(flag, ": more than 64"));
  return out;
}
constexpr absl::string_view kLogLevelNames[] = {"trace", "debug", "info", "warn", "error", "off"};
constexpr absl::string_view kSimdNames[] = {"auto", "sse", "avx2", "avx512"};

}  // namespace

SimdLevel ChosenSimdLevel(SimdChoice choice) {
  switch (choice) {
    case SimdChoice::kSse:
      return SimdLevel::kSse;
    case SimdChoice::kAvx2:
      return SimdLevel::kAvx2;
    case SimdChoice::kAvx512:
      return SimdLevel::kAvx512;
    case SimdChoice::kAuto:
      break;
  }
  return BestSimdLevel();
}

bool AbslParseFlag(absl::string_view text, DurabilityPolicy* policy, std::string* error) {
  // DurabilityPolicy's values 1 to 4 (kDefault is not a server's policy).
  constexpr absl::string_view kNames[] = {"none", "periodic", "always", "replicated"};
  int index = 0;
  if (!ParseName(text, kNames, &index, error)) return false;
  *policy = static_cast<DurabilityPolicy>(index + 1);
  return true;
}

std::string AbslUnparseFlag(DurabilityPolicy policy) {
  return std::string(DurabilityPolicyName(policy));
}

bool AbslParseFlag(absl::string_view text, RecoveryMode* mode, std::string* error) {
  return ParseName(text, kRecoveryNames, mode, error);
}

std::string AbslUnparseFlag(RecoveryMode mode) {
  return std::string(kRecoveryNames[static_cast<size_t>(mode)]);
}

bool AbslParseFlag(absl::string_view text, LogLevel* level, std::string* error) {
  return ParseName(text, kLogLevelNames, level, error);
}

std::string AbslUnparseFlag(LogLevel level) {
  return std::string(kLogLevelNames[static_cast<size_t>(level)]);
}

bool AbslParseFlag(absl::string_view text, SimdChoice* choice, std::string* error) {
  return ParseName(text, kSimdNames, choice, error);
}

std::string AbslUnparseFlag(SimdChoice choice) {
  return std::string(kSimdNames[static_cast<size_t>(choice)]);
}

absl::Status ServerOptions::Validate() const {
#define COLLIDE_CHECK_RANGE(type, name, default_value, range, help) \
  if (absl::Status status = CheckRange(#name, name, range); !status.ok()) return status;
  COLLIDE_SERVER_OPTIONS(COLLIDE_CHECK_RANGE)
#undef COLLIDE_CHECK_RANGE
#define COLLIDE_CHECK_LIMIT_RANGE(type, name, default_value, range, help) \
  if (absl::Status status = CheckRange(#name, limits.name, range); !status.ok()) return status;
  COLLIDE_SERVICE_LIMITS(COLLIDE_CHECK_LIMIT_RANGE)
#undef COLLIDE_CHECK_LIMIT_RANGE

  if (address.empty()) return absl::InvalidArgumentError("address: empty (host:port)");
  if (data_dir.empty()) return absl::InvalidArgumentError("data_dir: empty (a directory)");
  if (durability != DurabilityPolicy::kNone && durability != DurabilityPolicy::kPeriodic &&
      durability != DurabilityPolicy::kAlways && durability != DurabilityPolicy::kReplicated) {
    return absl::InvalidArgumentError("durability: must be none, periodic, always or replicated");
  }
  if (durability == DurabilityPolicy::kReplicated && nats_url.empty()) {
    return absl::InvalidArgumentError("durability: replicated needs --nats_url");
  }
  COLLIDE_RETURN_IF_ERROR(ParseNatsUrls(nats_url).status());
  if (!advertise_address.empty()) {
    COLLIDE_RETURN_IF_ERROR(CheckAddressWord("advertise_address", advertise_address));
    if (advertise_address.find(':') == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("advertise_address: \"", advertise_address, "\" is not host:port"));
    }
  } else if (!nats_url.empty()) {
    const absl::string_view host = HostOf(address);
    if (host == "0.0.0.0" || host == "[::]" || host == "::" || absl::StartsWith(address, "unix")) {
      return absl::InvalidArgumentError(
          absl::StrCat("advertise_address: needed with --nats_url: --address ", address,
                       " is not an address other servers and clients can reach"));
    }
  }
  if (!router_admin.empty() || !router_map.empty() || !router_backend.empty()) {
    if (router_admin.empty() || router_map.empty() || router_backend.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(router_admin.empty() ? "router_admin"
                       : router_map.empty() ? "router_map"
                                            : "router_backend",
                       ": --router_admin, --router_map and --router_backend go together"));
    }
    COLLIDE_RETURN_IF_ERROR(ParseRouterAdmin(router_admin).status());
    COLLIDE_RETURN_IF_ERROR(CheckAddressWord("router_map", router_map));
    for (char c : router_backend) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
        return absl::InvalidArgumentError(
            absl::StrCat("router_backend: \"", router_backend,
                         "\" holds a character other than [A-Za-z0-9_.-]"));
      }
    }
    if (router_backend.size() > 128) {
      return absl::InvalidArgumentError("router_backend: longer than 128 characters");
    }
  }
  const bool allow_remote = !token_file.empty() || allow_insecure_remote;
  if (!allow_remote && !IsLoopbackAddress(address)) return RemoteRefused("address", address);
  if (tls_cert.empty() != tls_key.empty()) {
    return absl::InvalidArgumentError(tls_cert.empty() ? "tls_cert: needed with --tls_key"
                                                       : "tls_key: needed with --tls_cert");
  }
  if (!tls_ca.empty() && tls_cert.empty()) {
    return absl::InvalidArgumentError("tls_ca: needs --tls_cert and --tls_key");
  }
  if (!metrics_address.empty()) {
    if (absl::Status parsed =
            ParseHttpAddress(metrics_address, allow_remote, "metrics_address").status();
        !parsed.ok()) {
      return parsed;
    }
  } else if (!metrics_port_file.empty()) {
    return absl::InvalidArgumentError("metrics_port_file: needs --metrics_address");
  }
  if (!viewer_address.empty()) {
    if (absl::Status parsed =
            ParseHttpAddress(viewer_address, allow_remote, "viewer_address").status();
        !parsed.ok()) {
      return parsed;
    }
  } else if (!viewer_port_file.empty()) {
    return absl::InvalidArgumentError("viewer_port_file: needs --viewer_address");
  }
  if (simd != SimdChoice::kAuto && !SimdLevelSupported(ChosenSimdLevel(simd))) {
    const std::string_view lacked = SimdLevelName(ChosenSimdLevel(simd));
    const std::string_view best = SimdLevelName(BestSimdLevel());
    return absl::InvalidArgumentError(
        absl::StrCat("simd: this CPU lacks ", absl::string_view(lacked.data(), lacked.size()),
                     " (the best it has is ", absl::string_view(best.data(), best.size()),
                     "; --simd=auto picks it)"));
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> ServerOptions::Describe() const {
  std::vector<std::pair<std::string, std::string>> described;
#define COLLIDE_DESCRIBE_OPTION(type, name, default_value, range, help) \
  described.emplace_back(#name, Spell(name));
  COLLIDE_SERVER_OPTIONS(COLLIDE_DESCRIBE_OPTION)
#undef COLLIDE_DESCRIBE_OPTION
#define COLLIDE_DESCRIBE_LIMIT(type, name, default_value, range, help) \
  described.emplace_back(#name, Spell(limits.name));
  COLLIDE_SERVICE_LIMITS(COLLIDE_DESCRIBE_LIMIT)
#undef COLLIDE_DESCRIBE_LIMIT
  return described;
}

absl::StatusOr<std::vector<std::string>> ParseNatsUrls(absl::string_view list) {
  COLLIDE_ASSIGN_OR_RETURN(std::vector<std::string> urls, ParseList("nats_url", list));
  for (const std::string& url : urls) {
    if (!absl::StartsWith(url, "nats://") && !absl::StartsWith(url, "tls://")) {
      return absl::InvalidArgumentError(
          absl::StrCat("nats_url: \"", url, "\" is not nats://host:port (or tls://)"));
    }
    if (url.find('@') != std::string::npos) {
      // Every option is logged at start (Describe): a password here would be too.
      return absl::InvalidArgumentError(
          "nats_url: holds credentials (user@ or user:password@), which the start-up log would "
          "show; collide-server connects to NATS without credentials (docs/SECURITY.md)");
    }
  }
  return urls;
}

absl::StatusOr<std::vector<std::string>> ParseRouterAdmin(absl::string_view list) {
  COLLIDE_ASSIGN_OR_RETURN(std::vector<std::string> routers, ParseList("router_admin", list));
  for (const std::string& router : routers) {
    const size_t colon = router.rfind(':');
    int port = 0;
    if (colon == std::string::npos || colon == 0 ||
        !absl::SimpleAtoi(router.substr(colon + 1), &port) || port < 1 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("router_admin: \"", router, "\" is not host:port"));
    }
  }
  return routers;
}

uint32_t UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp<uint32_t>(static_cast<uint32_t>(std::max(cpus, 1)), 1, kMaxQueryThreads);
}

ServerOptions DefaultServerOptions() {
  ServerOptions options;
  options.query_threads = UsableCpus();
  return options;
}

}  // namespace collide
