// A small JSON value: the monitor's command replies (machine output next
// to the human message), reading them back (the MonClient, `strata up`'s
// wait, the CLI's --format json), and quote() for every hand-built JSON
// report (scrub results, bench reports). Debian 12's Boost (1.74)
// predates Boost.JSON, and the replies are small, so this stays tiny:
// objects keep insertion order, numbers are int64 or double.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/status.h"

namespace strata::json {

class Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;

class Value {
 public:
  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int v) : v_(int64_t(v)) {}
  Value(unsigned v) : v_(int64_t(v)) {}
  Value(long v) : v_(int64_t(v)) {}
  Value(unsigned long v) : v_(int64_t(v)) {}
  Value(long long v) : v_(int64_t(v)) {}
  Value(unsigned long long v) : v_(int64_t(v)) {}
  Value(double d) : v_(d) {}
  Value(const char *s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(Array a) : v_(std::make_shared<Array>(std::move(a))) {}
  Value(Object o) : v_(std::make_shared<Object>(std::move(o))) {}

  bool is_null() const { return v_.index() == 0; }
  bool is_bool() const { return v_.index() == 1; }
  bool is_int() const { return v_.index() == 2; }
  bool is_number() const { return v_.index() == 2 || v_.index() == 3; }
  bool is_string() const { return v_.index() == 4; }
  bool is_array() const { return v_.index() == 5; }
  bool is_object() const { return v_.index() == 6; }

  // Typed reads; the fallback when the value has another type.
  bool as_bool(bool fallback = false) const;
  int64_t as_int(int64_t fallback = 0) const;
  double as_double(double fallback = 0) const;
  std::string as_string(std::string fallback = {}) const;
  const Array &as_array() const;    // empty array when not an array
  const Object &as_object() const;  // empty object when not an object

  // Object member (null Value when absent or not an object).
  const Value &operator[](std::string_view key) const;
  // Appends to an object / array (turns null into one first).
  Value &set(std::string key, Value v);
  Value &push(Value v);

  // Compact JSON text.
  std::string dump() const;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, std::shared_ptr<Array>,
               std::shared_ptr<Object>>
      v_;
};

// Parses one JSON document (RFC 8259; \u escapes to UTF-8). Errors name the
// byte offset.
Result<Value> parse(std::string_view text);

// `s` as a JSON string literal, quotes included.
std::string quote(std::string_view s);

}  // namespace strata::json
