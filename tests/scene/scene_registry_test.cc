#include "scene/scene_registry.h"

#include <string>

#include "gtest/gtest.h"

namespace collide {
namespace {

TEST(ValidateSceneName, AcceptsTheDocumentedCharsetAndLength) {
  for (const char* name : {"arena", "a", "0", "Arena_2", "world-1.v2", "x.y-z_W"}) {
    EXPECT_TRUE(ValidateSceneName(name).ok()) << name;
  }
  EXPECT_TRUE(ValidateSceneName(std::string(kMaxSceneNameLength, 'a')).ok());
}

TEST(ValidateSceneName, RejectsEachBadNameWithTheReason) {
  struct Case {
    std::string name;
    std::string message;
  };
  const Case cases[] = {
      {"", "scene: a name has 1 to 128 characters, got 0"},
      {std::string(kMaxSceneNameLength + 1, 'a'), "scene: a name has 1 to 128 characters, got 129"},
      {".hidden", "scene: a name starts with a letter or a digit"},
      {"..", "scene: a name starts with a letter or a digit"},
      {"-x", "scene: a name starts with a letter or a digit"},
      {"a/b", "scene: character 1 of the name is not one of [A-Za-z0-9_.-]"},
      {"a b", "scene: character 1 of the name is not one of [A-Za-z0-9_.-]"},
      {"ab\xc3\xa9", "scene: character 2 of the name is not one of [A-Za-z0-9_.-]"},
      {std::string("a\0b", 3), "scene: character 1 of the name is not one of [A-Za-z0-9_.-]"},
  };
  for (const Case& c : cases) {
    absl::Status status = ValidateSceneName(c.name);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(status.message(), c.message);
  }
}

TEST(SceneRegistry, CreatesListsGetsAndDeletes) {
  SceneRegistry registry;
  ASSERT_TRUE(registry.Create("b", SceneOptions{}).ok());
  ASSERT_TRUE(registry.Create("a", SceneOptions{.fat_margin = 0.5f}).ok());
  EXPECT_EQ(registry.List(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(registry.size(), 2u);
  absl::StatusOr<std::shared_ptr<Scene>> a = registry.Get("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->options().fat_margin, 0.5f);

  absl::StatusOr<std::shared_ptr<Scene>> dup = registry.Create("a", SceneOptions{});
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(dup.status().message(), "scene: scene \"a\" already exists");

  ASSERT_TRUE(registry.Delete("a").ok());
  EXPECT_TRUE((*a)->deleted());  // holders see the deletion
  absl::StatusOr<std::shared_ptr<Scene>> gone = registry.Get("a");
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "scene: no scene \"a\"");
  EXPECT_EQ(registry.Delete("a").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.List(), (std::vector<std::string>{"b"}));
  // The name is free again.
  EXPECT_TRUE(registry.Create("a", SceneOptions{}).ok());
}

TEST(SceneRegistry, RejectsBadNamesBadOptionsAndTooManyScenes) {
  SceneRegistry registry(SceneRegistryOptions{.max_scenes = 2});
  EXPECT_EQ(registry.Create("no/slash", SceneOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status bad_margin = registry.Create("x", SceneOptions{.fat_margin = -1}).status();
  EXPECT_EQ(bad_margin.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_margin.message(), "options.fat_margin: must be finite and in [0, 1e6], got -1");
  EXPECT_EQ(registry.Create("x", SceneOptions{.max_bodies = 0}).status().message(),
            "options.max_bodies: must be in [1, 1073741824], got 0");
  ASSERT_TRUE(registry.Create("x", SceneOptions{}).ok());
  ASSERT_TRUE(registry.Create("y", SceneOptions{}).ok());
  absl::Status full = registry.Create("z", SceneOptions{}).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(), "scene: the server holds its limit of 2 scenes");
}

TEST(SceneRegistry, CommitHooksRunBeforeTheChangeAndCanCancelIt) {
  SceneRegistry registry;
  absl::StatusOr<std::shared_ptr<Scene>> cancelled = registry.Create(
      "a", SceneOptions{}, []() -> absl::StatusOr<uint64_t> { return absl::InternalError("x"); });
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(registry.size(), 0u);
  absl::StatusOr<std::shared_ptr<Scene>> created =
      registry.Create("a", SceneOptions{}, []() -> absl::StatusOr<uint64_t> { return 42; });
  ASSERT_TRUE(created.ok());
  EXPECT_EQ((*created)->log_position(), 42u);
  EXPECT_EQ(registry.Delete("a", [] { return absl::InternalError("y"); }).code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(registry.Get("a").ok());
  EXPECT_FALSE((*created)->deleted());
}

TEST(SceneRegistry, StatsOfAScene) {
  SceneRegistry registry;
  absl::StatusOr<std::shared_ptr<Scene>> s = registry.Create("s", SceneOptions{});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Apply(UpdateBatch{{UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}})}}).ok());
  absl::StatusOr<SceneStats> stats = registry.Stats("s");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->version, 1u);
  EXPECT_EQ(stats->body_count, 1);
  EXPECT_EQ(registry.Stats("t").status().code(), absl::StatusCode::kNotFound);
}

TEST(SceneRegistry, AdoptRefusesATakenName) {
  SceneRegistry registry;
  ASSERT_TRUE(registry.Adopt(std::make_shared<Scene>("s", SceneOptions{})).ok());
  EXPECT_EQ(registry.Adopt(std::make_shared<Scene>("s", SceneOptions{})).code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace collide
