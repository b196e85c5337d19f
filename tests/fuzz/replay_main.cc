// A main() for the fuzz targets without libFuzzer (any compiler, any build): feeds the target
// every file of the corpus directories given, then deterministic mutations of each (bit flips,
// byte overwrites with edge values, truncations, duplicated spans: 256 per file from a fixed
// seed). ctest runs it for each target in the ordinary and sanitizer builds, so every corpus
// input and its near neighbours are checked on every run; scripts/fuzz runs the real fuzzer.
//   <target>_replay <corpus dir or file>...

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr int kMutationsPerFile = 256;
constexpr uint32_t kSeed = 20261125;

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string Mutate(const std::string& input, std::mt19937& random) {
  std::string out = input;
  const uint8_t kEdges[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
  const int kind = static_cast<int>(random() % 4);
  if (out.empty()) return std::string(1, static_cast<char>(kEdges[random() % 5]));
  const size_t at = random() % out.size();
  switch (kind) {
    case 0:
      out[at] = static_cast<char>(out[at] ^ (1u << (random() % 8)));
      break;
    case 1:
      out[at] = static_cast<char>(kEdges[random() % 5]);
      break;
    case 2:
      out.resize(at);
      break;
    default: {
      const size_t length = 1 + random() % std::min<size_t>(16, out.size() - at);
      out.insert(at, out.substr(at, length));
      break;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(path);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "no corpus files given\n");
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::mt19937 random(kSeed);
  size_t runs = 0;
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string input{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    Run(input);
    ++runs;
    for (int m = 0; m < kMutationsPerFile; ++m, ++runs) Run(Mutate(input, random));
  }
  std::printf("%zu corpus files, %zu inputs run\n", files.size(), runs);
  return 0;
}
