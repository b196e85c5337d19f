// The viewer's API below HTTP: query strings decoded by civetweb's decoder, refusals rendered
// as collide.viewer.v1.Error in protobuf's JSON mapping with their HTTP status.

#include "server/viewer/viewer_api.h"

#include <string>

#include "absl/strings/match.h"
#include "collide/v1/collide.pb.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "server/viewer/viewer_json.h"

namespace collide {
namespace {

std::string Message(absl::string_view query) {
  return std::string(ParseQueryParams(query, {"name", "limit"}).status().message());
}

TEST(ParseQueryParamsTest, DecodesNamesAndValuesWithTheHttpServersDecoder) {
  absl::StatusOr<QueryParams> params = ParseQueryParams(
      "name=a%20b+c&limit=3&&li%6dit2=%7B%22x%22%3A1%7D", {"name", "limit", "limit2"});
  ASSERT_TRUE(params.ok()) << params.status();
  ASSERT_EQ(params->size(), 3u);
  EXPECT_EQ((*params)[0], (std::pair<std::string, std::string>{"name", "a b c"}));
  EXPECT_EQ((*params)[1], (std::pair<std::string, std::string>{"limit", "3"}));
  EXPECT_EQ((*params)[2], (std::pair<std::string, std::string>{"limit2", "{\"x\":1}"}));
  // A value may hold '=' and a NUL byte; a name without '=' has an empty value.
  params = ParseQueryParams("name=a=b%00c&limit", {"name", "limit"});
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ((*params)[0].second, std::string("a=b\0c", 5));
  EXPECT_EQ((*params)[1].second, "");
  // A '%' without two hex digits after it is kept as it is (the scene name's check refuses it).
  params = ParseQueryParams("name=%zz%4", {"name"});
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ((*params)[0].second, "%zz%4");
}

TEST(ParseQueryParamsTest, RefusesUnknownRepeatedAndOversizedNamingTheParameter) {
  EXPECT_EQ(Message("nope=1"), "query: unknown parameter \"nope\" (known: name, limit)");
  EXPECT_EQ(Message("name=a&name=b"), "name: given more than once");
  EXPECT_EQ(Message("name=a&na%6de=b"), "name: given more than once");
  EXPECT_TRUE(absl::StartsWith(Message(std::string(kMaxViewerQueryBytes + 1, 'a')),
                               "query: 8193 bytes, over the limit of 8192"));
  EXPECT_TRUE(ParseQueryParams(std::string(kMaxViewerQueryBytes, '&'), {}).ok());
  // A control or non-ASCII byte in a name is escaped, not copied raw; a long one is cut.
  EXPECT_EQ(Message("%01x%ff=1"), "query: unknown parameter \"\\001x\\377\" (known: name, limit)");
  EXPECT_EQ(Message(std::string(1000, 'x')).size(), Message(std::string(100, 'x')).size());
}

TEST(ErrorReplyTest, MapsCodesToHttpStatusAndWritesAnErrorMessage) {
  EXPECT_EQ(ErrorReply(absl::InvalidArgumentError("x")).http_status, 400);
  EXPECT_EQ(ErrorReply(absl::OutOfRangeError("x")).http_status, 400);
  EXPECT_EQ(ErrorReply(absl::FailedPreconditionError("x")).http_status, 400);
  EXPECT_EQ(ErrorReply(absl::UnauthenticatedError("x")).http_status, 401);
  EXPECT_EQ(ErrorReply(absl::PermissionDeniedError("x")).http_status, 403);
  EXPECT_EQ(ErrorReply(absl::NotFoundError("x")).http_status, 404);
  EXPECT_EQ(ErrorReply(absl::ResourceExhaustedError("x")).http_status, 413);
  EXPECT_EQ(ErrorReply(absl::UnavailableError("x")).http_status, 503);
  EXPECT_EQ(ErrorReply(absl::InternalError("x")).http_status, 500);
  EXPECT_EQ(ErrorReply(absl::InvalidArgumentError("a\"b\\c\n")).body,
            "{\"error\":\"a\\\"b\\\\c\\n\",\"code\":\"INVALID_ARGUMENT\"}\n");
  EXPECT_EQ(ErrorReply(absl::OutOfRangeError("at_tick: tick 17 is not retained")).body,
            "{\"error\":\"at_tick: tick 17 is not retained\",\"code\":\"OUT_OF_RANGE\"}\n");
  // UTF-8 is kept; other bytes (which protobuf would drop, logging each time) are escaped, and
  // the body reads back as the message.
  EXPECT_EQ(ErrorReply(absl::NotFoundError("scene: no scene \"t\xc3\xbf\"")).body,
            "{\"error\":\"scene: no scene \\\"t\xc3\xbf\\\"\",\"code\":\"NOT_FOUND\"}\n");
  const ViewerReply reply = ErrorReply(absl::InvalidArgumentError("request: \xff\xfe\x01"));
  viewer::v1::Error error;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(reply.body, &error).ok()) << reply.body;
  EXPECT_EQ(error.error(), "request: \\377\\376\\001");
  EXPECT_EQ(error.code(), "INVALID_ARGUMENT");
}

TEST(ErrorReplyTest, TheListenersOwnRefusalsCarryACode) {
  EXPECT_EQ(ListenerErrorBody(405, "method: PUT is not allowed (GET, HEAD)"),
            "{\"error\":\"method: PUT is not allowed (GET, HEAD)\",\"code\":\"UNIMPLEMENTED\"}\n");
  EXPECT_TRUE(absl::StrContains(ListenerErrorBody(404, "path: no such page"), "\"NOT_FOUND\""));
  EXPECT_TRUE(absl::StrContains(ListenerErrorBody(400, "request: x"), "\"INVALID_ARGUMENT\""));
  EXPECT_TRUE(absl::StrContains(ListenerErrorBody(413, "request: x"), "\"RESOURCE_EXHAUSTED\""));
  EXPECT_TRUE(absl::StrContains(ListenerErrorBody(500, "request: x"), "\"INTERNAL\""));
}

TEST(ToJsonTest, PrintsTheApisMessagesAsProtobufsJsonMapping) {
  v1::QueryResponse response;
  response.set_version(18446744073709551615ull);
  v1::Hit* hit = response.add_hits();
  hit->set_body_id(7);
  hit->set_distance(0.1f);
  hit->mutable_point()->set_x(0.70710677f);
  hit->mutable_normal()->set_z(-1);
  EXPECT_EQ(ToJson(response),
            "{\"version\":\"18446744073709551615\",\"hits\":[{\"body_id\":\"7\",\"distance\":0.1,"
            "\"point\":{\"x\":0.707106769,\"y\":0,\"z\":0},\"normal\":{\"x\":0,\"y\":0,\"z\":-1},"
            "\"depth\":0,\"start_overlapping\":false,\"back_face\":false}],\"truncated\":false}");
  // An absent optional field is left out; a present one is printed at any value.
  viewer::v1::ScenePage page;
  EXPECT_FALSE(absl::StrContains(ToJson(page), "at_tick"));
  EXPECT_FALSE(absl::StrContains(ToJson(page), "next_after"));
  page.set_at_tick(0);
  EXPECT_TRUE(absl::StrContains(ToJson(page), "\"at_tick\":\"0\""));
}

}  // namespace
}  // namespace collide
