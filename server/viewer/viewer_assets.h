#pragma once

#include <string_view>

namespace collide {

/// One file of the viewer's page (generated at build time by client/viewer/scripts/embed.js).
struct ViewerAsset {
  /// The path under /viewer/ (`index.html`, `viewer.js`, `three/three.module.js`, ...).
  std::string_view path;
  /// The Content-Type it is served with.
  std::string_view content_type;
  /// The bytes.
  std::string_view data;
};

/// The embedded page's files; null when `path` is not one.
const ViewerAsset* FindViewerAsset(std::string_view path);

/// False when the page was not built (client/viewer's npm packages missing at build time): the
/// index then says so.
bool ViewerAssetsBuilt();

}  // namespace collide
