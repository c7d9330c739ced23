// "POOL/NAME" or "POOL/NAME@SNAP": how commands and the rbd plugin name an
// image (as `rbd` does). Header-only: the plugin and the strata binary
// both parse it.
#pragma once

#include <optional>
#include <string>

namespace strata::rbd {

struct ImageSpec {
  std::string pool, name, snap;  // snap empty: the image itself
  std::string text() const { return pool + "/" + name + (snap.empty() ? "" : "@" + snap); }
};

// nullopt when the text is not POOL/NAME[@SNAP] with non-empty parts (or
// has an '@' when allow_snap is false); *why says what is wrong.
inline std::optional<ImageSpec> parse_image_spec(const std::string &text, bool allow_snap,
                                                 std::string *why) {
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0) {
    *why = "'" + text + "' is not POOL/NAME";
    return std::nullopt;
  }
  ImageSpec s;
  s.pool = text.substr(0, slash);
  std::string rest = text.substr(slash + 1);
  size_t at = rest.find('@');
  if (at != std::string::npos) {
    if (!allow_snap) {
      *why = "'" + text + "': a snapshot (@SNAP) is not allowed here";
      return std::nullopt;
    }
    s.snap = rest.substr(at + 1);
    rest = rest.substr(0, at);
    if (s.snap.empty()) {
      *why = "'" + text + "': empty snapshot name after '@'";
      return std::nullopt;
    }
  }
  s.name = rest;
  if (s.name.empty() || s.name.find('/') != std::string::npos) {
    *why = "'" + text + "' is not POOL/NAME (the image name is empty or has a '/')";
    return std::nullopt;
  }
  return s;
}

}  // namespace strata::rbd
