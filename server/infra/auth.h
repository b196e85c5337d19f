#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/string_ref.h"

namespace collide {

/// What a token may do; each role includes the ones below it (admin ⊇ writer ⊇ reader).
enum class Role : int {
  /// ListScenes, GetScene, GetBodies, QueryStream, Raycast, SphereCast, Overlap.
  kReader = 1,
  /// Reader + UpsertBodies, RemoveBodies, UpdateStream.
  kWriter = 2,
  /// Writer + CreateScene, DeleteScene.
  kAdmin = 3,
};

/// "reader", "writer" or "admin".
absl::string_view RoleName(Role role);

/// Who a call is made by: a role and the scene-name prefixes it is limited to.
struct Principal {
  Role role = Role::kReader;
  /// Empty: every scene. Otherwise only scenes whose name starts with one of these.
  std::vector<std::string> prefixes{};

  /// OK when the role is at least `required`; PERMISSION_DENIED otherwise.
  absl::Status Require(Role required) const;
  /// True when `scene` starts with one of the prefixes (or there are none).
  bool CanSee(absl::string_view scene) const;
  /// OK when CanSee(scene); PERMISSION_DENIED `scene: ...` otherwise.
  absl::Status CheckScene(absl::string_view scene) const;
};

/// One line of a token file.
struct TokenEntry {
  std::string token;
  Principal principal;
};

/// True when `a` and `b` are equal, in time that depends only on their lengths (not on where
/// they differ).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

/// The client metadata of a call, as gRPC hands it to the server.
using ClientMetadata = std::multimap<grpc::string_ref, grpc::string_ref>;

/// Checks the bearer token of each call against a token file.
///
/// Token file: one token per line, `#` comments and blank lines ignored:
/// `<token> <role> [<prefix>[,<prefix>...]]`, role `reader`, `writer` or `admin`. Every call
/// carries `authorization: Bearer <token>`. Tokens are compared in constant time and never logged.
class Authenticator {
 public:
  /// An authenticator that lets every call through as an admin of every scene (no token file).
  static std::unique_ptr<Authenticator> AllowAll();
  /// Parses token file text. INVALID_ARGUMENT `line N: ...` for a malformed line, a duplicate
  /// token, or no token at all.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Parse(absl::string_view text);
  /// Reads and parses the token file at `path` (NOT_FOUND etc. when it cannot be read).
  static absl::StatusOr<std::unique_ptr<Authenticator>> FromFile(const std::string& path);

  /// False for AllowAll().
  bool enabled() const { return enabled_; }
  /// How many tokens the file holds.
  size_t token_count() const { return entries_.size(); }

  /// The principal of the call with `metadata`: UNAUTHENTICATED when the `authorization`
  /// header is missing, not `Bearer <token>`, or names an unknown token. The pointer lives as
  /// long as the authenticator.
  absl::StatusOr<const Principal*> Authenticate(const ClientMetadata& metadata) const;
  /// As above, from the header's value alone (empty when absent).
  absl::StatusOr<const Principal*> AuthenticateHeader(absl::string_view authorization) const;

 private:
  Authenticator() = default;

  bool enabled_ = false;
  std::vector<TokenEntry> entries_;
  Principal all_;
};

}  // namespace collide
