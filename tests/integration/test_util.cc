#include "integration/test_util.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collide/v1/collide.grpc.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/grpcpp.h"
#include "support/ports.h"

#ifndef COLLIDE_CLI_PATH
#error "COLLIDE_CLI_PATH must name the collide binary"
#endif

namespace collide::integration {
namespace {

v1::Quat UnitRotation(const v1::Pose& pose) {
  v1::Quat q;
  if (!pose.has_rotation()) {
    q.set_w(1.0f);
    return q;
  }
  q = pose.rotation();
  double length = std::sqrt(double{q.x()} * q.x() + double{q.y()} * q.y() + double{q.z()} * q.z() +
                            double{q.w()} * q.w());
  if (length > 0) {
    q.set_x(static_cast<float>(q.x() / length));
    q.set_y(static_cast<float>(q.y() / length));
    q.set_z(static_cast<float>(q.z() / length));
    q.set_w(static_cast<float>(q.w() / length));
  }
  return q;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

::testing::AssertionResult IsOk(const absl::Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << status.ToString();
}

::testing::AssertionResult HasError(const absl::Status& status, absl::StatusCode code,
                                    absl::string_view path_prefix) {
  if (status.code() == code && absl::StartsWith(status.message(), path_prefix)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected " << absl::StatusCodeToString(code) << " with a message starting \""
         << path_prefix << "\", got " << absl::StatusCodeToString(status.code()) << ": \""
         << status.message() << "\"";
}

::testing::AssertionResult SameBody(const v1::Body& got, const v1::Body& sent) {
  using google::protobuf::util::MessageDifferencer;
  std::string problems;
  if (got.id() != sent.id()) absl::StrAppend(&problems, " id");
  if (!MessageDifferencer::Equals(got.shape(), sent.shape())) absl::StrAppend(&problems, " shape");
  if (!MessageDifferencer::Equals(got.pose().position(), sent.pose().position())) {
    absl::StrAppend(&problems, " position");
  }
  v1::Quat a = UnitRotation(got.pose()), b = UnitRotation(sent.pose());
  if (std::fabs(a.x() - b.x()) > 1e-6f || std::fabs(a.y() - b.y()) > 1e-6f ||
      std::fabs(a.z() - b.z()) > 1e-6f || std::fabs(a.w() - b.w()) > 1e-6f) {
    absl::StrAppend(&problems, " rotation");
  }
  if ((got.has_category() ? got.category() : 1u) != (sent.has_category() ? sent.category() : 1u)) {
    absl::StrAppend(&problems, " category");
  }
  if ((got.has_mask() ? got.mask() : ~0u) != (sent.has_mask() ? sent.mask() : ~0u)) {
    absl::StrAppend(&problems, " mask");
  }
  if (got.user_data() != sent.user_data()) absl::StrAppend(&problems, " user_data");
  if (got.kind() != sent.kind()) absl::StrAppend(&problems, " kind");
  if (problems.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "body " << sent.id() << " differs in" << problems << ":\n  got  "
         << got.ShortDebugString() << "\n  sent " << sent.ShortDebugString();
}

::testing::AssertionResult SameBodies(const std::vector<v1::Body>& got,
                                      const std::vector<v1::Body>& sent) {
  if (got.size() != sent.size()) {
    return ::testing::AssertionFailure()
           << "got " << got.size() << " bodies, expected " << sent.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    ::testing::AssertionResult same = SameBody(got[i], sent[i]);
    if (!same) return same;
  }
  return ::testing::AssertionSuccess();
}

std::vector<v1::Body> BodiesOf(const v1::GetBodiesResponse& response) {
  return std::vector<v1::Body>(response.bodies().begin(), response.bodies().end());
}

namespace {

// CRC-32C (Castagnoli, reflected 0x82F63B78), bit by bit.
uint32_t Crc32cExtend(uint32_t crc, const std::string& bytes) {
  crc = ~crc;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

}  // namespace

v1::SceneExportMessage HonestTrailer(const std::vector<v1::SceneExportMessage>& messages) {
  v1::SceneExportMessage trailer;
  uint32_t crc = 0;
  uint64_t bodies = 0;
  uint64_t chunks = 0;
  for (const v1::SceneExportMessage& m : messages) {
    if (m.has_header()) crc = Crc32cExtend(crc, m.header().SerializeAsString());
    if (!m.has_chunk()) continue;
    crc = Crc32cExtend(crc, m.chunk().SerializeAsString());
    bodies += m.chunk().bodies_size();
    ++chunks;
  }
  trailer.mutable_trailer()->set_body_count(bodies);
  trailer.mutable_trailer()->set_chunk_count(chunks);
  trailer.mutable_trailer()->set_crc32c(Crc32cExtend(crc, trailer.trailer().SerializeAsString()));
  return trailer;
}

std::vector<v1::Body> RandomlyRotatedBodies(int count, uint32_t seed, uint64_t first_id) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> off(-5e-4, 5e-4);
  std::uniform_real_distribution<float> coordinate(-50.0f, 50.0f);
  std::vector<v1::Body> bodies;
  for (int i = 0; i < count; ++i) {
    v1::Body body;
    body.set_id(first_id + static_cast<uint64_t>(i));
    v1::Shape* shape = body.mutable_shape();
    switch (i % 3) {
      case 0:
        shape->mutable_sphere()->set_radius(0.5f);
        break;
      case 1:
        shape->mutable_box()->mutable_half_extents()->set_x(0.5f);
        shape->mutable_box()->mutable_half_extents()->set_y(0.25f);
        shape->mutable_box()->mutable_half_extents()->set_z(1.0f);
        break;
      default:
        shape->mutable_capsule()->set_radius(0.3f);
        shape->mutable_capsule()->set_half_height(0.6f);
    }
    v1::Vec3* position = body.mutable_pose()->mutable_position();
    position->set_x(coordinate(rng));
    position->set_y(coordinate(rng));
    position->set_z(coordinate(rng));
    double q[4] = {normal(rng), normal(rng), normal(rng), normal(rng)};
    if (i % 5 == 1) q[0] = q[1] = 0.0;  // about z only
    const double len = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    const double scale = (i % 4 == 0 ? 1.0 : 1.0 + off(rng)) / len;
    v1::Quat* rotation = body.mutable_pose()->mutable_rotation();
    if (i % 7 == 3) {
      rotation->set_z(0.7071068f);
      rotation->set_w(0.7071068f);
    } else {
      rotation->set_x(static_cast<float>(q[0] * scale));
      rotation->set_y(static_cast<float>(q[1] * scale));
      rotation->set_z(static_cast<float>(q[2] * scale));
      rotation->set_w(static_cast<float>(q[3] * scale));
    }
    bodies.push_back(body);
  }
  return bodies;
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env) {
  TempDir dir("cmd");
  std::string out_path = dir.File("out"), err_path = dir.File("err");
  std::vector<std::string> words = argv;
  std::vector<char*> args;
  for (std::string& word : words) args.push_back(word.data());
  args.push_back(nullptr);
  std::vector<std::string> variables = env;
  std::vector<char*> envp;
  // getenv finds the first match: the additions go first.
  for (std::string& variable : variables) envp.push_back(variable.data());
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  CommandResult result;
  pid_t pid = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) _exit(126);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadAll(out_path);
  result.err = ReadAll(err_path);
  return result;
}

const char* CliPath() { return COLLIDE_CLI_PATH; }

pid_t SpawnWithLog(std::vector<std::string> argv, const std::string& log_path) {
  std::vector<char*> args;
  for (std::string& word : argv) args.push_back(word.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
      close(log);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

int FreePort() { return collide::testing::ReservePort(); }

RefusingPort::RefusingPort() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in address = collide::testing::LoopbackAddress();
  EXPECT_EQ(bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
  address_ = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
}

RefusingPort::~RefusingPort() { close(fd_); }

v1::GetServerStatsResponse ServerStats(client::Client& client) {
  auto stub = v1::Collide::NewStub(client.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::GetServerStatsResponse stats;
  grpc::Status status = stub->GetServerStats(&context, v1::GetServerStatsRequest(), &stats);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return stats;
}

}  // namespace collide::integration
