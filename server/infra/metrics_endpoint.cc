#include "server/infra/metrics_endpoint.h"

#include <arpa/inet.h>

#include <exception>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/server.h"

namespace collide {

absl::StatusOr<MetricsAddress> ParseMetricsAddress(absl::string_view address, bool allow_remote,
                                                   absl::string_view flag) {
  auto invalid = [address, flag](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", absl::CEscape(address), "\" is not host:port (", why, ")"));
  };
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return invalid("no port");
  MetricsAddress parsed;
  parsed.host = std::string(address.substr(0, colon));
  const absl::string_view port = address.substr(colon + 1);
  uint32_t port_number = 0;
  if (port.empty() || port.size() > 5 || !absl::ascii_isdigit(port[0]) ||
      !absl::SimpleAtoi(port, &port_number) || port_number > 65535) {
    return invalid("the port is a number from 0 to 65535");
  }
  parsed.port = static_cast<int>(port_number);
  std::string numeric_host;
  if (parsed.host.find('\0') != std::string::npos) {
    return invalid("the host is an IPv4 address, localhost or [an IPv6 address]");
  }
  if (absl::EqualsIgnoreCase(parsed.host, "localhost")) {
    numeric_host = "127.0.0.1";
  } else if (parsed.host.size() > 2 && parsed.host.front() == '[' && parsed.host.back() == ']') {
    in6_addr v6{};
    if (inet_pton(AF_INET6, parsed.host.substr(1, parsed.host.size() - 2).c_str(), &v6) != 1) {
      return invalid("the host is an IPv4 address, localhost or [an IPv6 address]");
    }
    numeric_host = parsed.host;
  } else {
    in_addr v4{};
    if (inet_pton(AF_INET, parsed.host.c_str(), &v4) != 1) {
      return invalid("the host is an IPv4 address, localhost or [an IPv6 address]");
    }
    numeric_host = parsed.host;
  }
  if (!allow_remote && !IsLoopbackAddress(absl::StrCat(numeric_host, ":0"))) {
    return absl::FailedPreconditionError(absl::StrCat(
        flag, ": refusing to serve ", address,
        " (not a loopback address) without --token_file; set --allow_insecure_remote to "
        "serve it without authentication"));
  }
  parsed.bind = absl::StrCat(numeric_host, ":", parsed.port);
  return parsed;
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const MetricsAddress& address) {
  auto endpoint = std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint());
  try {
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(address.bind, 2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("metrics_address: cannot listen on ", address.bind,
                                               " (the port is in use or the address is not "
                                               "one of this host's: ",
                                               e.what(), ")"));
  }
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  if (ports.empty() || ports[0] <= 0) {
    return absl::UnavailableError(
        absl::StrCat("metrics_address: cannot listen on ", address.bind, " (no port bound)"));
  }
  endpoint->port_ = ports[0];
  endpoint->bound_address_ = absl::StrCat(address.host, ":", endpoint->port_);
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  // Stops the HTTP server's threads before the collectables they read go.
  exposer_.reset();
}

void MetricsEndpoint::Register(std::shared_ptr<prometheus::Collectable> collectable) {
  exposer_->RegisterCollectable(collectable);
  collectables_.push_back(std::move(collectable));
}

}  // namespace collide
