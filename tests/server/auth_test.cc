#include "server/infra/auth.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace collide {
namespace {

constexpr char kTokens[] = R"(# collide tokens
reader-token reader
  writer-token   writer   arena-,lobby   # two prefixes

admin-token admin
)";

std::unique_ptr<Authenticator> Parsed() {
  absl::StatusOr<std::unique_ptr<Authenticator>> auth = Authenticator::Parse(kTokens);
  EXPECT_TRUE(auth.ok()) << auth.status();
  return auth.ok() ? *std::move(auth) : nullptr;
}

TEST(TokenFile, ParsesTokensRolesAndPrefixesSkippingCommentsAndBlankLines) {
  std::unique_ptr<Authenticator> auth = Parsed();
  ASSERT_NE(auth, nullptr);
  EXPECT_TRUE(auth->enabled());
  EXPECT_EQ(auth->token_count(), 3u);
  absl::StatusOr<const Principal*> writer = auth->AuthenticateHeader("Bearer writer-token");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->role, Role::kWriter);
  EXPECT_EQ((*writer)->prefixes, (std::vector<std::string>{"arena-", "lobby"}));
  absl::StatusOr<const Principal*> admin = auth->AuthenticateHeader("Bearer admin-token");
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ((*admin)->role, Role::kAdmin);
  EXPECT_TRUE((*admin)->prefixes.empty());
}

TEST(TokenFile, RejectsMalformedLinesNamingTheLine) {
  struct Case {
    const char* text;
    const char* message_start;
  };
  const Case cases[] = {
      {"a reader\nlonely\n", "line 2: "},
      {"a superuser\n", "line 1: unknown role"},
      {"a reader x y\n", "line 1: too many fields"},
      {"a reader x,,y\n", "line 1: empty scene prefix"},
      {"a reader\n# c\na admin\n", "line 3: duplicate token"},
      {"# only comments\n\n", "the token file holds no token"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<Authenticator>> auth = Authenticator::Parse(c.text);
    ASSERT_FALSE(auth.ok()) << c.text;
    EXPECT_EQ(auth.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_TRUE(absl::StartsWith(auth.status().message(), c.message_start))
        << c.text << " -> " << auth.status().message();
  }
}

TEST(TokenFile, MissingFileIsAnError) {
  EXPECT_FALSE(Authenticator::FromFile("/nonexistent/collide/tokens").ok());
}

TEST(Authenticate, MissingMalformedOrUnknownTokensAreUnauthenticated) {
  std::unique_ptr<Authenticator> auth = Parsed();
  ASSERT_NE(auth, nullptr);
  for (const char* header : {"", "reader-token", "Basic reader-token", "Bearer ", "Bearer nope",
                             "Bearer reader-token2", "Bearer reader-toke"}) {
    absl::StatusOr<const Principal*> principal = auth->AuthenticateHeader(header);
    ASSERT_FALSE(principal.ok()) << header;
    EXPECT_EQ(principal.status().code(), absl::StatusCode::kUnauthenticated) << header;
  }
  ClientMetadata none;
  EXPECT_EQ(auth->Authenticate(none).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(Authenticate, ReadsTheAuthorizationMetadata) {
  std::unique_ptr<Authenticator> auth = Parsed();
  ASSERT_NE(auth, nullptr);
  const std::string key = "authorization", value = "Bearer reader-token";
  ClientMetadata metadata;
  metadata.emplace(grpc::string_ref(key), grpc::string_ref(value));
  absl::StatusOr<const Principal*> principal = auth->Authenticate(metadata);
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ((*principal)->role, Role::kReader);
}

TEST(Authenticate, AllowAllLetsEveryCallInAsAdminOfEveryScene) {
  std::unique_ptr<Authenticator> auth = Authenticator::AllowAll();
  EXPECT_FALSE(auth->enabled());
  ClientMetadata none;
  absl::StatusOr<const Principal*> principal = auth->Authenticate(none);
  ASSERT_TRUE(principal.ok());
  EXPECT_TRUE((*principal)->Require(Role::kAdmin).ok());
  EXPECT_TRUE((*principal)->CanSee("anything"));
}

TEST(Principal, RolesIncludeTheLowerOnesAndNotTheHigherOnes) {
  const Role roles[] = {Role::kReader, Role::kWriter, Role::kAdmin};
  for (Role have : roles) {
    for (Role need : roles) {
      const absl::Status status = Principal{.role = have}.Require(need);
      if (static_cast<int>(have) >= static_cast<int>(need)) {
        EXPECT_TRUE(status.ok()) << RoleName(have) << " " << RoleName(need);
      } else {
        EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied)
            << RoleName(have) << " " << RoleName(need);
      }
    }
  }
}

TEST(Principal, PrefixesLimitTheScenesBothWays) {
  const Principal limited{.role = Role::kAdmin, .prefixes = {"arena-", "lobby"}};
  EXPECT_TRUE(limited.CanSee("arena-1"));
  EXPECT_TRUE(limited.CanSee("lobby"));
  EXPECT_TRUE(limited.CanSee("lobby2"));
  EXPECT_FALSE(limited.CanSee("arena"));
  EXPECT_FALSE(limited.CanSee("other"));
  EXPECT_FALSE(limited.CanSee(""));
  const absl::Status denied = limited.CheckScene("other");
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StartsWith(denied.message(), "scene: "));
  EXPECT_TRUE(Principal{.role = Role::kReader}.CanSee("other"));
}

TEST(ConstantTimeEquals, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "Secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("secret2", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace collide
