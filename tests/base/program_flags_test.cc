// FlagFileName: the name --help shows for the file that defines a flag, whatever path the
// compiler was given (absolute, relative to the build directory, through ccache's base_dir).

#include "base/program_flags.h"

#include "gtest/gtest.h"

namespace collide {
namespace {

TEST(FlagFileName, NamesTheBinarysFlagsFileFromTheSourceRoot) {
  for (const char* compiled :
       {"server/main.cc", "../server/main.cc", "../../server/main.cc",
        "/home/someone/src/collide/server/main.cc", "/build/collide-0.1.0/server/main.cc"}) {
    EXPECT_EQ(FlagFileName(compiled, "server/main.cc"), "server/main.cc") << compiled;
  }
  // Another binary's main.cc is not this one's.
  EXPECT_EQ(FlagFileName("/src/client/server/main.cc", "server/health_probe/main.cc"), "main.cc");
  EXPECT_EQ(FlagFileName("/src/myserver/main.cc", "server/main.cc"), "main.cc");
}

TEST(FlagFileName, NamesAbseilsFlagsFromAbslAndAnyOtherByItsFileName) {
  EXPECT_EQ(FlagFileName("/build/abseil-cpp-20220623/absl/flags/parse.cc", "server/main.cc"),
            "absl/flags/parse.cc");
  EXPECT_EQ(FlagFileName("absl/flags/internal/usage.cc", "server/main.cc"),
            "absl/flags/internal/usage.cc");
  EXPECT_EQ(FlagFileName("/work/tree/bench/other.cc", "server/main.cc"), "other.cc");
  EXPECT_EQ(FlagFileName("plain.cc", "server/main.cc"), "plain.cc");
}

}  // namespace
}  // namespace collide
