// How values look in a failed CHECK. Catch2 prints "{?}" for a type it
// cannot print, and byte strings as they are (NULs, 0xff, megabytes); the
// kit's types and the containers its wrappers return get readable printers
// here: bytes escaped and cut short, errno codes by name and number.
// Standalone (no kit state), so that tests can check the printers alone.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::conformance {

// "ENOENT" for -ENOENT or ENOENT; the number for unknown values.
std::string errno_name(int64_t code);

// A return code that is 0, a count, or a negative errno:
// "-ENOENT (-2)", "0", "1000".
std::string describe_rc(int64_t code);

// An errno-style return code that prints by name in a failed check:
//   CHECK(Errno(s.stat_rc("c", "o")) == Errno(-ENOENT))
//   -> "-ENODATA (-61) == -ENOENT (-2)"
struct Errno {
  explicit Errno(int64_t c) : code(c) {}
  int64_t code;
  friend bool operator==(const Errno &a, const Errno &b) { return a.code == b.code; }
  friend bool operator!=(const Errno &a, const Errno &b) { return a.code != b.code; }
};

// `bytes` as a double-quoted literal: printable ASCII as is, \" \\ \n \r
// \t, anything else (NUL too) \xNN. Past `max` bytes it stops and says how many
// bytes there were in all, so that a 64 MiB read does not flood a report.
std::string printable_bytes(std::string_view bytes, size_t max = 80);

// A list printed as "{ a, b, c }", stopping after `max` elements with
// "... (N in all)".
template <class It, class Fn>
std::string printable_list(It begin, It end, Fn element, size_t max = 16) {
  std::string out = "{";
  size_t n = 0;
  for (It it = begin; it != end; ++it, ++n) {
    if (n == max) {
      out += ", ... (" + std::to_string(std::distance(begin, end)) + " in all)";
      break;
    }
    out += (n ? ", " : " ") + element(*it);
  }
  return out + " }";
}

}  // namespace strata::conformance

namespace Catch {

namespace strata_printers {
inline std::string bytes(const std::string &s) { return strata::conformance::printable_bytes(s); }
inline std::string kv(const std::pair<std::string, std::string> &p) {
  return "{ " + bytes(p.first) + ", " + bytes(p.second) + " }";
}
}  // namespace strata_printers

template <>
struct StringMaker<strata::conformance::Errno> {
  static std::string convert(const strata::conformance::Errno &e) {
    return strata::conformance::describe_rc(e.code);
  }
};

template <>
struct StringMaker<std::optional<std::string>> {
  static std::string convert(const std::optional<std::string> &v) {
    return v ? strata_printers::bytes(*v) : "nullopt";
  }
};

template <>
struct StringMaker<std::pair<std::string, std::string>> {
  static std::string convert(const std::pair<std::string, std::string> &p) {
    return strata_printers::kv(p);
  }
};

template <>
struct StringMaker<std::pair<uint64_t, std::string>> {
  static std::string convert(const std::pair<uint64_t, std::string> &p) {
    return "{ " + std::to_string(p.first) + ", " + strata_printers::bytes(p.second) + " }";
  }
};

template <>
struct StringMaker<std::vector<std::string>> {
  static std::string convert(const std::vector<std::string> &v) {
    return strata::conformance::printable_list(v.begin(), v.end(), strata_printers::bytes);
  }
};

template <>
struct StringMaker<std::set<std::string>> {
  static std::string convert(const std::set<std::string> &v) {
    return strata::conformance::printable_list(v.begin(), v.end(), strata_printers::bytes);
  }
};

template <>
struct StringMaker<std::vector<std::pair<std::string, std::string>>> {
  static std::string convert(const std::vector<std::pair<std::string, std::string>> &v) {
    return strata::conformance::printable_list(v.begin(), v.end(), strata_printers::kv);
  }
};

template <>
struct StringMaker<std::vector<std::pair<uint64_t, std::string>>> {
  static std::string convert(const std::vector<std::pair<uint64_t, std::string>> &v) {
    return strata::conformance::printable_list(
        v.begin(), v.end(), StringMaker<std::pair<uint64_t, std::string>>::convert);
  }
};

// Placement results: lists of device lists, thousands long.
template <>
struct StringMaker<std::vector<std::vector<int32_t>>> {
  static std::string convert(const std::vector<std::vector<int32_t>> &v) {
    return strata::conformance::printable_list(v.begin(), v.end(), [](const auto &one) {
      return strata::conformance::printable_list(
          one.begin(), one.end(), [](int32_t id) { return std::to_string(id); },
          64);  // STRATA_PLACEMENT_MAX_RESULT: one result in full
    });
  }
};

}  // namespace Catch
