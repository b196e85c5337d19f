#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "scene/asset.h"
#include "store/file_system.h"

namespace collide {

// The files that hold assets' contents in a data directory: one per content, named after its
// SHA-256 (asset-<64 hex digits>.asset), holding one framed record (store/record_format.h,
// sequence 0) whose payload is a collide.storage.v1.AssetFile. A content is written once, before
// the first log record that names it, and shared by every scene (and incarnation) that holds
// it; the store deletes it once no record or snapshot on disk names it (Database, DESIGN).

/// The file name of the content `sha256`.
std::string AssetFileName(absl::string_view sha256);
/// True when `name` is an asset file's name (a well-formed hash); sets `*sha256`.
bool ParseAssetFileName(absl::string_view name, std::string* sha256);
/// True when `sha256` is 64 lowercase hexadecimal digits.
bool IsSha256Hex(absl::string_view sha256);

/// The serialized AssetFile of `source`.
std::string EncodeAssetFile(const AssetSource& source);

/// Writes `asset`'s content as its file atomically: a temporary file, fsync, rename over the final
/// name, fsync of the directory. Once this returns OK the file survives a crash; a crash midway
/// leaves at most a temporary file (deleted at the next start). Returns the file's size.
absl::StatusOr<uint64_t> WriteAssetFile(FileSystem* fs, const std::string& dir, const Asset& asset);

/// Reads the file of content `sha256` and checks it: one intact record, an AssetFile that
/// decodes, a content that passes ValidateAssetSource (with the widest limits: an asset once
/// accepted is never refused at start-up because a flag was lowered since) and whose SHA-256 is
/// the name's. NOT_FOUND when there is no such file; DATA_LOSS naming the file otherwise.
absl::StatusOr<AssetSource> ReadAssetFile(FileSystem* fs, const std::string& dir,
                                          absl::string_view sha256);

}  // namespace collide
