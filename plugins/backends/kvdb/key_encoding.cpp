#include "kvdb/key_encoding.h"

namespace strata::kvdb::keys {

namespace {
constexpr char kEscape = '\x00';
constexpr char kEscapedNul = '\xFF';
constexpr char kTerminator = '\x01';
}  // namespace

void append_component(std::string &out, std::string_view part) {
  out.reserve(out.size() + part.size() + 2);
  for (char c : part) {
    out.push_back(c);
    if (c == kEscape) out.push_back(kEscapedNul);
  }
  out.push_back(kEscape);
  out.push_back(kTerminator);
}

std::string compose(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) append_component(out, p);
  return out;
}

void append_u64(std::string &out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

bool next_component(std::string_view &in, std::string &part) {
  part.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != kEscape) {
      part.push_back(in[i]);
      continue;
    }
    if (i + 1 >= in.size()) return false;
    if (in[i + 1] == kTerminator) {
      in.remove_prefix(i + 2);
      return true;
    }
    if (in[i + 1] != kEscapedNul) return false;
    part.push_back(kEscape);
    ++i;
  }
  return false;
}

bool next_u64(std::string_view &in, uint64_t &v) {
  if (in.size() < 8) return false;
  v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  in.remove_prefix(8);
  return true;
}

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  // Drop trailing 0xFF bytes (nothing greater fits in their place), then
  // increment the last remaining byte.
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xFF) end.pop_back();
  if (!end.empty()) end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

void append_printable(std::string &out, std::string_view bytes, size_t max_shown) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < bytes.size() && i < max_shown; ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (bytes.size() > max_shown) out += "...";
}

}  // namespace strata::kvdb::keys
