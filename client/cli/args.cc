#include "client/cli/args.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace collide::cli {
namespace {

absl::Status FlagError(absl::string_view name, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("--", name, ": ", reason));
}

bool ParseFloatWord(absl::string_view word, float* out) {
  word = absl::StripAsciiWhitespace(word);
  if (word.empty()) return false;
  // SimpleAtof accepts nan and inf, which lets the server, not the CLI, judge such values.
  return absl::SimpleAtof(word, out);
}

bool ParseUintWord(absl::string_view word, uint64_t* out) {
  word = absl::StripAsciiWhitespace(word);
  if (absl::ConsumePrefix(&word, "0x") || absl::ConsumePrefix(&word, "0X")) {
    return !word.empty() && absl::SimpleHexAtoi(word, out);
  }
  return !word.empty() && word[0] != '-' && absl::SimpleAtoi(word, out);
}

}  // namespace

Args Args::FromParsed(std::vector<std::string> positional,
                      std::map<std::string, std::string, std::less<>> flags,
                      std::map<std::string, std::vector<std::string>, std::less<>> repeated) {
  Args args;
  args.positional_ = std::move(positional);
  args.flags_ = std::move(flags);
  args.repeated_ = std::move(repeated);
  return args;
}

std::vector<std::string> Args::Repeated(absl::string_view name) const {
  auto it = repeated_.find(name);
  return it == repeated_.end() ? std::vector<std::string>() : it->second;
}

bool Args::Has(absl::string_view name) const {
  return flags_.find(name) != flags_.end() || repeated_.find(name) != repeated_.end();
}

void Args::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

void Args::Require(absl::string_view name) {
  if (!Has(name)) Fail(FlagError(name, "required"));
}

bool Args::Bool(absl::string_view name) {
  auto it = flags_.find(name);
  if (it == flags_.end()) return false;
  const std::string& value = it->second;
  if (value.empty() || value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  Fail(FlagError(name, absl::StrCat("expected true or false, got \"", value, "\"")));
  return false;
}

std::string Args::String(absl::string_view name, absl::string_view fallback) {
  auto it = flags_.find(name);
  return it == flags_.end() ? std::string(fallback) : it->second;
}

float Args::Float(absl::string_view name, float fallback) {
  auto it = flags_.find(name);
  if (it == flags_.end()) return fallback;
  float value = fallback;
  if (!ParseFloatWord(it->second, &value)) {
    Fail(FlagError(name, absl::StrCat("expected a number, got \"", it->second, "\"")));
  }
  return value;
}

uint64_t Args::Uint64(absl::string_view name, uint64_t fallback) {
  auto it = flags_.find(name);
  if (it == flags_.end()) return fallback;
  uint64_t value = fallback;
  if (!ParseUintWord(it->second, &value)) {
    Fail(FlagError(name, absl::StrCat("expected an unsigned integer, got \"", it->second, "\"")));
  }
  return value;
}

uint32_t Args::Uint32(absl::string_view name, uint32_t fallback) {
  uint64_t value = Uint64(name, fallback);
  if (value > UINT32_MAX) {
    Fail(FlagError(name, absl::StrCat("at most 4294967295, got ", value)));
    return fallback;
  }
  return static_cast<uint32_t>(value);
}

std::vector<uint64_t> Args::Uint64List(absl::string_view name) {
  std::vector<uint64_t> values;
  auto it = flags_.find(name);
  if (it == flags_.end()) return values;
  for (absl::string_view word : absl::StrSplit(it->second, ',')) {
    uint64_t value = 0;
    if (!ParseUintWord(word, &value)) {
      Fail(FlagError(name, absl::StrCat("expected comma-separated unsigned integers, got \"",
                                        it->second, "\"")));
      return {};
    }
    values.push_back(value);
  }
  return values;
}

std::optional<std::vector<float>> Args::Floats(absl::string_view name, size_t count) {
  auto it = flags_.find(name);
  if (it == flags_.end()) return std::nullopt;
  std::vector<float> values;
  for (absl::string_view word : absl::StrSplit(it->second, ',')) {
    float value = 0.0f;
    if (!ParseFloatWord(word, &value)) {
      values.clear();
      break;
    }
    values.push_back(value);
  }
  if (values.size() != count) {
    Fail(FlagError(name, absl::StrCat("expected ", count, " comma-separated numbers, got \"",
                                      it->second, "\"")));
    return std::nullopt;
  }
  return values;
}

v1::Vec3 Args::Vec3(absl::string_view name, const v1::Vec3& fallback) {
  std::optional<std::vector<float>> xyz = Floats(name, 3);
  if (!xyz) return fallback;
  v1::Vec3 v;
  v.set_x((*xyz)[0]);
  v.set_y((*xyz)[1]);
  v.set_z((*xyz)[2]);
  return v;
}

v1::Vec3 Args::RequiredVec3(absl::string_view name) {
  Require(name);
  return Vec3(name, v1::Vec3());
}

std::optional<v1::Quat> Args::Quat(absl::string_view name) {
  std::optional<std::vector<float>> xyzw = Floats(name, 4);
  if (!xyzw) return std::nullopt;
  v1::Quat q;
  q.set_x((*xyzw)[0]);
  q.set_y((*xyzw)[1]);
  q.set_z((*xyzw)[2]);
  q.set_w((*xyzw)[3]);
  return q;
}

}  // namespace collide::cli
