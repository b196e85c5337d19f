// The x-collide-scene header: how it is read from a call's metadata and checked against the
// scene a request names.

#include "server/infra/scene_header.h"

#include <gtest/gtest.h>

#include <string>

namespace collide {
namespace {

grpc::string_ref Ref(const std::string& text) { return grpc::string_ref(text.data(), text.size()); }

TEST(SceneHeaderOf, IsAbsentWithoutTheKeyAndTheFirstValueOtherwise) {
  const std::string key = "x-collide-scene", other_key = "x-collide-scenes";
  const std::string first = "arena", second = "lobby", auth = "authorization", bearer = "Bearer t";
  ClientMetadata metadata;
  metadata.emplace(Ref(auth), Ref(bearer));
  metadata.emplace(Ref(other_key), Ref(second));
  EXPECT_EQ(SceneHeaderOf(metadata), std::nullopt);
  metadata.emplace(Ref(key), Ref(first));
  metadata.emplace(Ref(key), Ref(second));
  EXPECT_EQ(SceneHeaderOf(metadata), std::optional<std::string>("arena"));
}

TEST(SceneHeaderOf, KeepsAnEmptyValueAsPresent) {
  const std::string key = "x-collide-scene", empty;
  ClientMetadata metadata;
  metadata.emplace(Ref(key), Ref(empty));
  EXPECT_EQ(SceneHeaderOf(metadata), std::optional<std::string>(""));
}

TEST(CheckSceneHeader, AcceptsAnAbsentOrEqualHeader) {
  EXPECT_TRUE(CheckSceneHeader(std::nullopt, "arena").ok());
  EXPECT_TRUE(CheckSceneHeader(std::nullopt, "").ok());
  EXPECT_TRUE(CheckSceneHeader("arena", "arena").ok());
}

TEST(CheckSceneHeader, RejectsADifferentSceneNamingBoth) {
  struct Case {
    std::optional<std::string> header;
    std::string scene;
    std::string message;
  };
  const Case cases[] = {
      {"a", "b", R"(scene: "b" does not match the x-collide-scene header "a")"},
      // Case matters: scene names are case-sensitive.
      {"Arena", "arena", R"(scene: "arena" does not match the x-collide-scene header "Arena")"},
      {"", "arena", R"(scene: "arena" does not match the x-collide-scene header "")"},
      {"arena", "", R"(scene: "" does not match the x-collide-scene header "arena")"},
      // A prefix is not a match.
      {"arena", "arena2", R"(scene: "arena2" does not match the x-collide-scene header "arena")"},
      // Unvalidated names are escaped, not echoed raw.
      {"a", "b\"\n", R"(scene: "b\"\n" does not match the x-collide-scene header "a")"},
  };
  for (const Case& c : cases) {
    absl::Status status = CheckSceneHeader(c.header, c.scene);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.scene;
    EXPECT_EQ(status.message(), c.message);
  }
}

}  // namespace
}  // namespace collide
