#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/infra/listen_address.h"

struct mg_connection;
struct mg_context;

namespace collide {

/// Worker threads of each HTTP listener (/metrics, the viewer) besides those the viewer's live
/// streams hold: each connection holds one from its first byte to its answer, so this many
/// clients that send their headers slowly delay the others by at most kHttpHeaderTimeout per
/// round of this many (docs/SECURITY.md, "HTTP listeners").
inline constexpr int kHttpWorkerThreads = 128;

/// The longest a request's line and headers may take to arrive, from the connection's first
/// byte (the connection is then closed without an answer), and the longest a write may make no
/// progress (a client that stops reading). civetweb's request_timeout_ms.
inline constexpr std::chrono::milliseconds kHttpHeaderTimeout{5000};

/// The methods an HTTP listener answers; anything else gets 405 with `Allow: GET, HEAD`.
inline constexpr absl::string_view kAllowedHttpMethods = "GET, HEAD";

/// One GET or HEAD request, as a route sees it.
struct HttpRequest {
  /// civetweb's connection: mg_get_header, mg_get_request_info, mg_write.
  mg_connection* conn = nullptr;
  /// HEAD: the answer's headers only (WriteHttpAnswer leaves the body out).
  bool head = false;
  /// The path, percent-decoded (civetweb's local_uri), and the raw query string.
  absl::string_view path;
  absl::string_view query;
};

/// Writes a whole answer: the status line, Content-Type, Content-Length, Cache-Control,
/// `extra_headers` (each line ending in \r\n), the headers every answer carries (nosniff, no
/// framing, no referrer, Connection: close), then `body` unless `head_only`.
void WriteHttpAnswer(mg_connection* conn, int status, absl::string_view content_type,
                     absl::string_view body, bool head_only, absl::string_view cache = "no-store",
                     absl::string_view extra_headers = "");

/// The headers every answer of an HTTP listener carries, each line ending in \r\n.
absl::string_view CommonHttpHeaders();

/// How an HTTP listener runs.
struct HttpListenerOptions {
  /// The flag the address came from, for messages (`metrics_address`).
  std::string flag;
  /// Where to listen (ParseHttpAddress).
  HttpAddress address;
  /// Worker threads: kHttpWorkerThreads plus what long-lived answers hold.
  int threads = kHttpWorkerThreads;
  /// The body of the listener's own refusals (405, a malformed request, an unknown path) for
  /// `status` and `message` (`method: ...`), as `error_content_type`: JSON for the viewer, text
  /// for /metrics.
  std::function<std::string(int status, absl::string_view message)> error_body;
  std::string error_content_type = "text/plain; charset=utf-8";
};

/// A route: answers every GET or HEAD whose path is `prefix`, or (with `below`) below
/// `prefix/`; the longest matching prefix wins, "/" with `below` matches every path.
struct HttpRoute {
  std::string prefix;
  std::function<void(const HttpRequest&)> answer;
  bool below = true;
};

/// One HTTP/1.1 listener (civetweb) with the policy both of collide-server's share: GET and HEAD
/// only (anything else, including the methods civetweb itself does not parse, such as TRACE or
/// a made-up one: 405 with `Allow: GET, HEAD`), one request per connection, a bound on the time
/// headers may take (kHttpHeaderTimeout), and errors in the listener's own format.
class HttpListener {
 public:
  /// Binds `options.address` and starts the workers. UNAVAILABLE `flag: cannot listen on ...`
  /// when it cannot be bound. Routes are fixed here; they run on the workers, concurrently.
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(HttpListenerOptions options,
                                                             std::vector<HttpRoute> routes);
  /// Stop()s.
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  /// Stops accepting and waits for the requests in progress (idempotent).
  void Stop();

  /// The bound port (the picked one for port 0).
  int port() const { return port_; }
  /// host:port with the bound port.
  const std::string& bound_address() const { return bound_address_; }

  /// Writes the listener's refusal: `status` with error_body(status, message).
  void Refuse(mg_connection* conn, int status, absl::string_view message, bool head_only,
              absl::string_view extra_headers = "") const;

 private:
  HttpListener(HttpListenerOptions options, std::vector<HttpRoute> routes);
  static int Dispatch(mg_connection* conn, void* listener);
  static int OnHttpError(mg_connection* conn, int status, const char* message);

  const HttpListenerOptions options_;
  const std::vector<HttpRoute> routes_;
  mg_context* context_ = nullptr;
  int port_ = 0;
  std::string bound_address_;
};

}  // namespace collide
