// Errors as values (LevelDB's Status): a negative errno plus a message with
// context (which object, which file, which plugin). Core code returns these
// instead of throwing.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <utility>

namespace strata {

class Status {
 public:
  Status() = default;
  static Status OK() { return Status(); }
  // code: errno value, either sign.
  static Status Error(int code, std::string msg) {
    return Status(code < 0 ? code : -code, std::move(msg));
  }

  bool ok() const { return code_ == 0; }
  int code() const { return code_; }
  const std::string &message() const { return msg_; }
  // "message (errno name)"; for logs and the CLI.
  std::string ToString() const;

  // Prefixes the message with more context: "opening store /x: " + msg.
  Status Context(const std::string &prefix) const {
    return ok() ? *this : Status(code_, prefix + ": " + msg_);
  }

 private:
  Status(int code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  int code_ = 0;
  std::string msg_;
};

// A value or the Status explaining why there is none.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status s) : status_(std::move(s)) {}    // NOLINT
  bool ok() const { return status_.ok(); }
  const Status &status() const { return status_; }
  T &value() { return *value_; }
  const T &value() const { return *value_; }
  T &operator*() { return *value_; }
  T *operator->() { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace strata
