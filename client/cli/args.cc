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

absl::StatusOr<Args> Args::Parse(const std::vector<std::string>& words) {
  Args args;
  bool flags_ended = false;
  for (const std::string& word : words) {
    if (flags_ended || word.size() < 2 || word.substr(0, 2) != "--") {
      args.positional_.push_back(word);
      continue;
    }
    if (word == "--") {
      flags_ended = true;
      continue;
    }
    absl::string_view body = absl::string_view(word).substr(2);
    size_t eq = body.find('=');
    std::string name(body.substr(0, eq));
    std::string value = eq == absl::string_view::npos ? "" : std::string(body.substr(eq + 1));
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(word, ": no flag name"));
    if (!args.flags_.emplace(name, std::move(value)).second) {
      return FlagError(name, "given twice");
    }
  }
  return args;
}

void Args::DropPositional(size_t count) {
  count = std::min(count, positional_.size());
  positional_.erase(positional_.begin(), positional_.begin() + count);
}

std::vector<std::string> Args::FlagNames() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : flags_) names.push_back(name);
  return names;
}

bool Args::Has(absl::string_view name) const { return flags_.find(name) != flags_.end(); }

std::optional<std::string> Args::Take(absl::string_view name) {
  auto it = flags_.find(name);
  if (it == flags_.end()) return std::nullopt;
  std::string value = std::move(it->second);
  flags_.erase(it);
  return value;
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
