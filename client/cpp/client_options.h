#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace collide::client {

/// How a client reaches and authenticates to a collide server.
struct ClientOptions {
  /// The server's address, `host:port` (any gRPC target string).
  std::string address = "127.0.0.1:50051";
  /// Sent as `authorization: Bearer <token>` on every call when not empty.
  std::string bearer_token;
  /// Use TLS. Implied when any of the PEM fields below is set; with an empty
  /// `tls_root_cert_pem` the system's roots verify the server.
  bool use_tls = false;
  /// PEM text of the certificates that verify the server (empty: the system's roots).
  std::string tls_root_cert_pem;
  /// PEM text of the client's certificate chain, for servers that require client certificates
  /// (with tls_client_key_pem, or neither).
  std::string tls_client_cert_pem;
  /// PEM text of the private key of tls_client_cert_pem.
  std::string tls_client_key_pem;
  /// The name the server's certificate must carry, when it is not the host of `address` (for
  /// example when connecting by IP address or through a proxy). Empty: the address's host.
  std::string tls_server_name;
  /// The deadline of each unary call, from the moment it starts. Zero or negative: none.
  absl::Duration default_deadline = absl::Seconds(10);
  /// The deadline of each stream, from the moment it opens. Zero or negative (the default):
  /// none, for long-lived streams.
  absl::Duration stream_deadline = absl::ZeroDuration();
  /// The largest message the client accepts, in bytes.
  int max_receive_message_bytes = 64 << 20;
  /// The longest wait between the channel's attempts to reconnect after the server went away
  /// (gRPC's own default is 120 s, too slow for a game server that must resume within a second
  /// or two of a server restart). The first wait is a tenth of it.
  absl::Duration max_reconnect_backoff = absl::Seconds(1);
  /// Honour the `http_proxy` / `grpc_proxy` environment variables (gRPC's default). Tests that
  /// talk to a server on the loopback interface turn this off.
  bool enable_http_proxy = true;
};

/// Per-call settings that override the client's defaults.
struct CallOptions {
  /// The call's deadline, from the moment it starts: unset, the client's default_deadline for a
  /// unary call and stream_deadline for a stream; zero or negative, none.
  std::optional<absl::Duration> deadline;
  /// Wait for the channel to connect (up to the deadline) instead of failing at once with
  /// UNAVAILABLE while the server is unreachable.
  bool wait_for_ready = false;
};

/// Reads a whole PEM (or any text) file, for the TLS fields of ClientOptions.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

/// Opens a channel to `options.address` with the credentials the options describe. The channel
/// connects lazily, on the first call. INVALID_ARGUMENT for an empty address or a client
/// certificate without its key (or the reverse).
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ClientOptions& options);

}  // namespace collide::client
