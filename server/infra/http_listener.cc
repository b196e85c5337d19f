#include "server/infra/http_listener.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "civetweb.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 302:
      return "Found";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

constexpr absl::string_view kCommonHeaders =
    "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\nConnection: close\r\n";

// A method as RFC 9110 writes it: one or more token characters (the longest a made-up one may
// be quoted back is 32 characters).
bool IsMethodToken(absl::string_view method) {
  if (method.empty() || method.size() > 32) return false;
  for (const char c : method) {
    if (!absl::ascii_isalnum(c) &&
        absl::string_view("!#$%&'*+-.^_`|~").find(c) == absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

absl::string_view MethodOf(const mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  return info != nullptr && info->request_method != nullptr ? info->request_method : "";
}

std::string MethodRefusal(absl::string_view method) {
  return absl::StrCat("method: ", method, " is not allowed (", kAllowedHttpMethods, ")");
}

// civetweb's log: its own errors (a socket that failed, a refused connection), at debug.
int LogCivetweb(const mg_connection*, const char* message) {
  spdlog::debug("http: {}", message != nullptr ? message : "");
  return 1;
}

}  // namespace

absl::string_view CommonHttpHeaders() { return kCommonHeaders; }

void WriteHttpAnswer(mg_connection* conn, int status, absl::string_view content_type,
                     absl::string_view body, bool head_only, absl::string_view cache,
                     absl::string_view extra_headers) {
  const std::string header =
      absl::StrCat("HTTP/1.1 ", status, " ", ReasonPhrase(status),
                   "\r\nContent-Type: ", content_type, "\r\nContent-Length: ", body.size(),
                   "\r\nCache-Control: ", cache, "\r\n", extra_headers, kCommonHeaders, "\r\n");
  if (head_only || body.empty()) {
    mg_write(conn, header.data(), header.size());
    return;
  }
  // One write for a small answer (one packet); a large one is not copied.
  if (body.size() <= 16384) {
    const std::string whole = absl::StrCat(header, body);
    mg_write(conn, whole.data(), whole.size());
  } else if (mg_write(conn, header.data(), header.size()) > 0) {
    mg_write(conn, body.data(), body.size());
  }
}

HttpListener::HttpListener(HttpListenerOptions options, std::vector<HttpRoute> routes)
    : options_(std::move(options)), routes_([&routes] {
        // Longest prefix first: the first match is the most specific.
        std::stable_sort(routes.begin(), routes.end(), [](const HttpRoute& a, const HttpRoute& b) {
          return a.prefix.size() > b.prefix.size();
        });
        return std::move(routes);
      }()) {}

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(HttpListenerOptions options,
                                                                  std::vector<HttpRoute> routes) {
  static std::once_flag civetweb_initialised;
  std::call_once(civetweb_initialised, [] { mg_init_library(0); });
  auto listener =
      std::unique_ptr<HttpListener>(new HttpListener(std::move(options), std::move(routes)));
  const HttpListenerOptions& o = listener->options_;
  const std::string threads = std::to_string(std::max(1, o.threads));
  const std::string timeout = std::to_string(kHttpHeaderTimeout.count());
  // No document root: nothing is served from files; every path goes to Dispatch.
  const char* civet_options[] = {"listening_ports",
                                 o.address.bind.c_str(),
                                 "num_threads",
                                 threads.c_str(),
                                 "request_timeout_ms",
                                 timeout.c_str(),
                                 "enable_keep_alive",
                                 "no",
                                 nullptr};
  mg_callbacks callbacks{};
  callbacks.http_error = &HttpListener::OnHttpError;
  callbacks.log_message = &LogCivetweb;
  listener->context_ = mg_start(&callbacks, listener.get(), civet_options);
  if (listener->context_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(o.flag, ": cannot listen on ", o.address.bind, " (",
                                               WhyCannotListen(o.address.bind), ")"));
  }
  mg_set_request_handler(listener->context_, "/", &HttpListener::Dispatch, listener.get());
  mg_server_port ports[1] = {};
  if (mg_get_server_ports(listener->context_, 1, ports) < 1 || ports[0].port <= 0) {
    return absl::UnavailableError(
        absl::StrCat(o.flag, ": cannot listen on ", o.address.bind, " (no port bound)"));
  }
  listener->port_ = ports[0].port;
  listener->bound_address_ = absl::StrCat(o.address.host, ":", listener->port_);
  return listener;
}

HttpListener::~HttpListener() { Stop(); }

void HttpListener::Stop() {
  if (context_ != nullptr) {
    mg_stop(context_);
    context_ = nullptr;
  }
}

void HttpListener::Refuse(mg_connection* conn, int status, absl::string_view message,
                          bool head_only, absl::string_view extra_headers) const {
  const std::string body =
      options_.error_body ? options_.error_body(status, message) : absl::StrCat(message, "\n");
  WriteHttpAnswer(conn, status, options_.error_content_type, body, head_only, "no-store",
                  extra_headers);
}

int HttpListener::Dispatch(mg_connection* conn, void* data) {
  const HttpListener* self = static_cast<const HttpListener*>(data);
  const mg_request_info* info = mg_get_request_info(conn);
  const absl::string_view method = MethodOf(conn);
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    self->Refuse(conn, 405, MethodRefusal(method), false,
                 absl::StrCat("Allow: ", kAllowedHttpMethods, "\r\n"));
    return 405;
  }
  HttpRequest request;
  request.conn = conn;
  request.head = head;
  request.path = info != nullptr && info->local_uri != nullptr ? info->local_uri : "";
  request.query = info != nullptr && info->query_string != nullptr ? info->query_string : "";
  for (const HttpRoute& route : self->routes_) {
    const absl::string_view prefix = route.prefix;
    const bool matches =
        request.path == prefix ||
        (route.below && (prefix == "/" || (request.path.size() > prefix.size() &&
                                           absl::StartsWith(request.path, prefix) &&
                                           request.path[prefix.size()] == '/')));
    if (matches) {
      route.answer(request);
      return 200;
    }
  }
  self->Refuse(conn, 404, "path: no such page", head);
  return 404;
}

int HttpListener::OnHttpError(mg_connection* conn, int status, const char* message) {
  const HttpListener* self =
      static_cast<const HttpListener*>(mg_get_user_data(mg_get_context(conn)));
  if (self == nullptr) return 1;
  const mg_request_info* info = mg_get_request_info(conn);
  const absl::string_view method = MethodOf(conn);
  // civetweb refuses a method it does not know (TRACE, COPY, MOVE, a made-up one) as a bad
  // request; its request line was otherwise whole (a URI, then HTTP/1.x), so the answer is the
  // listener's 405 like any other method but GET and HEAD.
  const bool whole_line = info != nullptr && info->request_uri != nullptr &&
                          info->http_version != nullptr &&
                          (absl::string_view(info->http_version) == "1.0" ||
                           absl::string_view(info->http_version) == "1.1");
  if (status == 400 && whole_line && IsMethodToken(method) && method != "GET" && method != "HEAD") {
    self->Refuse(conn, 405, MethodRefusal(method), false,
                 absl::StrCat("Allow: ", kAllowedHttpMethods, "\r\n"));
    return 0;
  }
  self->Refuse(conn, status,
               absl::StrCat("request: ", message != nullptr ? message : "not understood"),
               method == "HEAD");
  return 0;
}

}  // namespace collide
