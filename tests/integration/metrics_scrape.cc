#include "integration/metrics_scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "support/ports.h"

namespace collide::integration {

absl::StatusOr<std::string> HttpGet(int port, absl::string_view path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in address = collide::testing::LoopbackAddress(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect to port ", port, ": ", std::strerror(error)));
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      return absl::UnavailableError("send failed");
    }
    sent += static_cast<size_t>(n);
  }
  std::string response;
  char buffer[16384];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const size_t end = response.find("\r\n\r\n");
  if (end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("no HTTP header in: ", response.substr(0, 200)));
  }
  const absl::string_view status_line =
      absl::string_view(response).substr(0, response.find("\r\n"));
  if (!absl::StrContains(status_line, " 200 ")) {
    return absl::FailedPreconditionError(absl::StrCat("GET ", path, ": ", status_line));
  }
  return response.substr(end + 4);
}

absl::StatusOr<std::vector<Sample>> ParseExposition(absl::string_view text) {
  std::vector<Sample> samples;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    auto bad = [line] { return absl::DataLossError(absl::StrCat("bad sample line: ", line)); };
    Sample sample;
    const size_t brace = line.find('{');
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) return bad();
    absl::string_view value = line.substr(space + 1);
    if (brace != absl::string_view::npos && brace < space) {
      sample.name = std::string(line.substr(0, brace));
      const size_t close = line.rfind('}');
      if (close == absl::string_view::npos || close < brace) return bad();
      absl::string_view labels = line.substr(brace + 1, close - brace - 1);
      // name="value" pairs; the values the server writes hold no quotes or commas.
      for (absl::string_view pair : absl::StrSplit(labels, ',', absl::SkipEmpty())) {
        const size_t equals = pair.find('=');
        if (equals == absl::string_view::npos) return bad();
        absl::string_view label_value = pair.substr(equals + 1);
        if (!absl::ConsumePrefix(&label_value, "\"") || !absl::ConsumeSuffix(&label_value, "\"")) {
          return bad();
        }
        sample.labels[std::string(pair.substr(0, equals))] = std::string(label_value);
      }
    } else {
      sample.name = std::string(line.substr(0, space));
    }
    if (value == "+Inf") {
      sample.value = HUGE_VAL;
    } else if (!absl::SimpleAtod(value, &sample.value)) {
      return bad();
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::optional<double> SampleValue(const std::vector<Sample>& samples, absl::string_view name,
                                  const std::map<std::string, std::string>& labels) {
  for (const Sample& sample : samples) {
    if (sample.name == name && sample.labels == labels) return sample.value;
  }
  return std::nullopt;
}

double SampleSum(const std::vector<Sample>& samples, absl::string_view name) {
  double sum = 0;
  for (const Sample& sample : samples) {
    if (sample.name == name) sum += sample.value;
  }
  return sum;
}

absl::StatusOr<std::vector<Sample>> Scrape(int port) {
  absl::StatusOr<std::string> body = HttpGet(port, "/metrics");
  if (!body.ok()) return body.status();
  return ParseExposition(*body);
}

}  // namespace collide::integration
