// Composite keys for an ordered key-value store.
//
// A composite key is a sequence of components of arbitrary bytes (collection,
// object, ...) followed by an optional raw suffix. Each component is escaped
// and terminated so that bytewise order of the encoded keys is the
// lexicographic order of the component tuples, and so that the encoding of a
// tuple prefix is a byte prefix of every key extending it (prefix scans):
//
//   byte 0x00 inside a component  -> 0x00 0xFF
//   end of a component            -> 0x00 0x01
//
// "a" < "a\0" < "a\1" < "ab" holds for the encodings too, because the
// terminator (00 01) sorts before an escaped NUL (00 FF) and before any other
// byte that could follow.
//
// A raw (unescaped) suffix may follow the last component when nothing comes
// after it: its bytes then sort in plain bytewise order (e.g. omap keys).
// Numbers that must sort numerically are appended as 8-byte big-endian.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace strata::kvdb::keys {

// Appends `part` escaped and terminated.
void append_component(std::string &out, std::string_view part);

// The concatenation of append_component over `parts`.
std::string compose(std::initializer_list<std::string_view> parts);

// Appends v as 8 bytes big-endian (so that keys sort by v).
void append_u64(std::string &out, uint64_t v);

// Consumes one escaped component from the front of `in` into `part`.
// Returns false (and leaves `in` unspecified) if `in` does not start with a
// well-formed component.
bool next_component(std::string_view &in, std::string &part);

// Consumes 8 bytes big-endian from the front of `in`. False if too short.
bool next_u64(std::string_view &in, uint64_t &v);

// The smallest key that is greater than every key starting with `prefix`:
// use it as the exclusive upper bound of a prefix scan. Returns an empty
// string when no such key exists (prefix empty or all 0xFF), meaning
// "no upper bound".
std::string prefix_end(std::string_view prefix);

// True if `key` starts with `prefix`.
inline bool has_prefix(std::string_view key, std::string_view prefix) {
  return key.substr(0, prefix.size()) == prefix;
}

// Appends `bytes` for an error or log message: printable ASCII as it is,
// any other byte and the backslash as \xNN; after `max_shown` bytes the
// rest becomes "...". Keys and object names are arbitrary bytes, and a
// message must stay one readable line.
void append_printable(std::string &out, std::string_view bytes, size_t max_shown);

}  // namespace strata::kvdb::keys
