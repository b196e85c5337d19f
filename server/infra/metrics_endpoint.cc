#include "server/infra/metrics_endpoint.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace collide {

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const HttpAddress& address) {
  auto endpoint = std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint());
  MetricsEndpoint* self = endpoint.get();
  HttpListenerOptions options;
  options.flag = "metrics_address";
  options.address = address;
  std::vector<HttpRoute> routes;
  routes.push_back(HttpRoute{"/metrics",
                             [self](const HttpRequest& request) {
                               // The version of the text format Prometheus asks for.
                               WriteHttpAnswer(request.conn, 200,
                                               "text/plain; version=0.0.4; charset=utf-8",
                                               self->Exposition(), request.head);
                             },
                             /*below=*/false});
  absl::StatusOr<std::unique_ptr<HttpListener>> listener =
      HttpListener::Start(std::move(options), std::move(routes));
  if (!listener.ok()) return listener.status();
  endpoint->listener_ = *std::move(listener);
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  // Stops the HTTP server's threads before the collectables they read go.
  if (listener_ != nullptr) listener_->Stop();
}

void MetricsEndpoint::Register(std::shared_ptr<prometheus::Collectable> collectable) {
  MutexLock lock(&mu_);
  collectables_.push_back(std::move(collectable));
}

std::string MetricsEndpoint::Exposition() {
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables;
  {
    MutexLock lock(&mu_);
    collectables = collectables_;
  }
  std::vector<prometheus::MetricFamily> families;
  for (const std::shared_ptr<prometheus::Collectable>& collectable : collectables) {
    std::vector<prometheus::MetricFamily> collected = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(collected.begin()),
                    std::make_move_iterator(collected.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace collide
