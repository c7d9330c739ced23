#include "common/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace strata::json {

namespace {
const Array kEmptyArray;
const Object kEmptyObject;
const Value kNull;
}  // namespace

bool Value::as_bool(bool fallback) const { return is_bool() ? std::get<bool>(v_) : fallback; }

int64_t Value::as_int(int64_t fallback) const {
  if (is_int()) return std::get<int64_t>(v_);
  if (v_.index() == 3) return int64_t(std::get<double>(v_));
  return fallback;
}

double Value::as_double(double fallback) const {
  if (is_int()) return double(std::get<int64_t>(v_));
  if (v_.index() == 3) return std::get<double>(v_);
  return fallback;
}

std::string Value::as_string(std::string fallback) const {
  return is_string() ? std::get<std::string>(v_) : fallback;
}

const Array &Value::as_array() const { return is_array() ? *std::get<5>(v_) : kEmptyArray; }

const Object &Value::as_object() const { return is_object() ? *std::get<6>(v_) : kEmptyObject; }

const Value &Value::operator[](std::string_view key) const {
  for (const auto &[k, v] : as_object())
    if (k == key) return v;
  return kNull;
}

Value &Value::set(std::string key, Value v) {
  if (!is_object()) v_ = std::make_shared<Object>();
  auto &o = *std::get<6>(v_);
  for (auto &[k, old] : o)
    if (k == key) return old = std::move(v);
  o.emplace_back(std::move(key), std::move(v));
  return o.back().second;
}

Value &Value::push(Value v) {
  if (!is_array()) v_ = std::make_shared<Array>();
  auto &a = *std::get<5>(v_);
  a.push_back(std::move(v));
  return a.back();
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

std::string Value::dump() const {
  switch (v_.index()) {
    case 0:
      return "null";
    case 1:
      return std::get<bool>(v_) ? "true" : "false";
    case 2:
      return std::to_string(std::get<int64_t>(v_));
    case 3: {
      double d = std::get<double>(v_);
      if (!std::isfinite(d)) return "null";
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      return buf;
    }
    case 4:
      return quote(std::get<std::string>(v_));
    case 5: {
      std::string out = "[";
      bool first = true;
      for (const Value &v : *std::get<5>(v_)) {
        if (!first) out += ",";
        first = false;
        out += v.dump();
      }
      return out + "]";
    }
    default: {
      std::string out = "{";
      bool first = true;
      for (const auto &[k, v] : *std::get<6>(v_)) {
        if (!first) out += ",";
        first = false;
        out += quote(k) + ":" + v.dump();
      }
      return out + "}";
    }
  }
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  Result<Value> document() {
    Value v;
    if (Status s = value(&v, 0); !s.ok()) return s;
    ws();
    if (pos_ != t_.size()) return fail("trailing characters");
    return v;
  }

 private:
  Status fail(const std::string &what) const {
    return Status::Error(EINVAL, "JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void ws() {
    while (pos_ < t_.size() &&
           (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    ws();
    if (pos_ < t_.size() && t_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (t_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  Status value(Value *out, int depth) {
    if (depth > 64) return fail("nested too deeply");
    ws();
    if (pos_ >= t_.size()) return fail("unexpected end");
    char c = t_[pos_];
    if (c == '{') {
      ++pos_;
      Value obj = Object{};
      if (eat('}')) {
        *out = std::move(obj);
        return Status::OK();
      }
      do {
        ws();
        std::string key;
        if (Status s = string(&key); !s.ok()) return s;
        if (!eat(':')) return fail("expected ':'");
        Value v;
        if (Status s = value(&v, depth + 1); !s.ok()) return s;
        obj.set(std::move(key), std::move(v));
      } while (eat(','));
      if (!eat('}')) return fail("expected ',' or '}'");
      *out = std::move(obj);
      return Status::OK();
    }
    if (c == '[') {
      ++pos_;
      Value arr = Array{};
      if (eat(']')) {
        *out = std::move(arr);
        return Status::OK();
      }
      do {
        Value v;
        if (Status s = value(&v, depth + 1); !s.ok()) return s;
        arr.push(std::move(v));
      } while (eat(','));
      if (!eat(']')) return fail("expected ',' or ']'");
      *out = std::move(arr);
      return Status::OK();
    }
    if (c == '"') {
      std::string s;
      if (Status st = string(&s); !st.ok()) return st;
      *out = std::move(s);
      return Status::OK();
    }
    if (word("true")) return *out = true, Status::OK();
    if (word("false")) return *out = false, Status::OK();
    if (word("null")) return *out = nullptr, Status::OK();
    return number(out);
  }

  Status number(Value *out) {
    size_t start = pos_;
    bool is_float = false;
    if (pos_ < t_.size() && t_[pos_] == '-') ++pos_;
    while (pos_ < t_.size()) {
      char c = t_[pos_];
      if (c >= '0' && c <= '9') {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        is_float = true;
        ++pos_;
      } else {
        break;
      }
    }
    std::string num(t_.substr(start, pos_ - start));
    if (num.empty() || num == "-") return fail("expected a value");
    char *end = nullptr;
    if (!is_float) {
      errno = 0;
      long long v = std::strtoll(num.c_str(), &end, 10);
      if (*end == 0 && errno == 0) return *out = Value(v), Status::OK();
    }
    double d = std::strtod(num.c_str(), &end);
    if (*end != 0) return fail("bad number '" + num + "'");
    *out = d;
    return Status::OK();
  }

  static void utf8(uint32_t cp, std::string *out) {
    if (cp < 0x80) {
      *out += char(cp);
    } else if (cp < 0x800) {
      *out += char(0xC0 | (cp >> 6));
      *out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += char(0xE0 | (cp >> 12));
      *out += char(0x80 | ((cp >> 6) & 0x3F));
      *out += char(0x80 | (cp & 0x3F));
    } else {
      *out += char(0xF0 | (cp >> 18));
      *out += char(0x80 | ((cp >> 12) & 0x3F));
      *out += char(0x80 | ((cp >> 6) & 0x3F));
      *out += char(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t *cp) {
    if (pos_ + 4 > t_.size()) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = t_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= uint32_t(c - 'A' + 10);
      else
        return false;
    }
    *cp = v;
    return true;
  }

  Status string(std::string *out) {
    if (pos_ >= t_.size() || t_[pos_] != '"') return fail("expected a string");
    ++pos_;
    while (pos_ < t_.size()) {
      char c = t_[pos_++];
      if (c == '"') return Status::OK();
      if (c != '\\') {
        if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
        *out += c;
        continue;
      }
      if (pos_ >= t_.size()) break;
      char e = t_[pos_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return fail("bad \\u escape");
          if (cp >= 0xD800 && cp < 0xDC00 && word("\\u")) {
            uint32_t lo;
            if (!hex4(&lo) || lo < 0xDC00 || lo >= 0xE000) return fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(cp, out);
          break;
        }
        default:
          return fail("bad escape");
      }
    }
    return fail("unterminated string");
  }

  std::string_view t_;
  size_t pos_ = 0;
};

}  // namespace

Result<Value> parse(std::string_view text) { return Parser(text).document(); }

}  // namespace strata::json
