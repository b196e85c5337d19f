#include "server/infra/auth.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/field_error.h"

namespace collide {

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kReader:
      return "reader";
    case Role::kWriter:
      return "writer";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

absl::Status Principal::Require(Role required) const {
  if (static_cast<int>(role) >= static_cast<int>(required)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("the call needs the ", RoleName(required),
                                                  " role; the token has ", RoleName(role)));
}

bool Principal::CanSee(absl::string_view scene) const {
  if (prefixes.empty()) return true;
  for (const std::string& prefix : prefixes) {
    if (absl::StartsWith(scene, prefix)) return true;
  }
  return false;
}

absl::Status Principal::CheckScene(absl::string_view scene) const {
  if (CanSee(scene)) return absl::OkStatus();
  return FieldStatus(absl::StatusCode::kPermissionDenied, "scene",
                     absl::StrCat("the token does not cover scene \"", scene, "\""));
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Every byte of the longer string is visited whatever the contents; the lengths are not secret.
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  // Keep the compiler from turning the loop into an early exit.
  volatile unsigned char result = diff;
  return result == 0;
}

std::unique_ptr<Authenticator> Authenticator::AllowAll() {
  auto auth = std::unique_ptr<Authenticator>(new Authenticator());
  auth->all_.role = Role::kAdmin;
  return auth;
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Parse(absl::string_view text) {
  auto auth = std::unique_ptr<Authenticator>(new Authenticator());
  auth->enabled_ = true;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    auto error = [&](absl::string_view reason) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", reason));
    };
    if (fields.size() < 2) return error("expected `<token> <role> [<prefix>,...]`");
    if (fields.size() > 3) return error("too many fields (prefixes are separated by commas)");
    TokenEntry entry;
    entry.token = std::string(fields[0]);
    if (fields[1] == "reader") {
      entry.principal.role = Role::kReader;
    } else if (fields[1] == "writer") {
      entry.principal.role = Role::kWriter;
    } else if (fields[1] == "admin") {
      entry.principal.role = Role::kAdmin;
    } else {
      return error(
          absl::StrCat("unknown role \"", fields[1], "\" (expected reader, writer or admin)"));
    }
    if (fields.size() == 3) {
      for (absl::string_view prefix : absl::StrSplit(fields[2], ',')) {
        if (prefix.empty()) return error("empty scene prefix");
        entry.principal.prefixes.emplace_back(prefix);
      }
    }
    for (const TokenEntry& other : auth->entries_) {
      if (other.token == entry.token) return error("duplicate token");
    }
    auth->entries_.push_back(std::move(entry));
  }
  if (auth->entries_.empty()) {
    return absl::InvalidArgumentError("the token file holds no token");
  }
  return auth;
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::FromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("token file ", path, ": cannot be read"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<std::unique_ptr<Authenticator>> auth = Parse(buffer.str());
  if (!auth.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, ": ", auth.status().message()));
  }
  return auth;
}

absl::StatusOr<const Principal*> Authenticator::Authenticate(const ClientMetadata& metadata) const {
  if (!enabled_) return &all_;
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return AuthenticateHeader("");
  return AuthenticateHeader(absl::string_view(it->second.data(), it->second.size()));
}

absl::StatusOr<const Principal*> Authenticator::AuthenticateHeader(
    absl::string_view authorization) const {
  if (!enabled_) return &all_;
  if (authorization.empty()) {
    return absl::UnauthenticatedError("authorization: missing `Bearer <token>` metadata");
  }
  absl::string_view token = authorization;
  if (token.size() < 7 || !absl::EqualsIgnoreCase(token.substr(0, 7), "Bearer ")) {
    return absl::UnauthenticatedError("authorization: expected `Bearer <token>`");
  }
  token = absl::StripAsciiWhitespace(token.substr(7));
  // Compare with every token, without stopping at a match.
  const Principal* found = nullptr;
  for (const TokenEntry& entry : entries_) {
    const bool match = ConstantTimeEquals(token, entry.token);
    if (match && found == nullptr) found = &entry.principal;
  }
  if (found == nullptr) return absl::UnauthenticatedError("authorization: unknown token");
  return found;
}

}  // namespace collide
