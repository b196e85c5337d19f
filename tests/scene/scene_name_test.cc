#include "scene/scene_name.h"

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

}  // namespace
}  // namespace collide
