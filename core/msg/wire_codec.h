// Cap'n Proto payloads in and out of Messages. Decoding is defensive: the
// payload comes from the network, so the reader has traversal and nesting
// limits and any Cap'n Proto exception (bad pointer, truncation) becomes a
// Status instead of escaping.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "msg/messenger.h"

namespace strata::msg {

// The builder's message as a flat array (the frame payload).
std::string to_payload(capnp::MessageBuilder &builder);

// Builds a Message of `type` from `builder` with `segments` as its data.
Message make_message(uint16_t type, capnp::MessageBuilder &builder,
                     std::vector<std::string> segments = {});

// Holds a checked, word-aligned copy of a payload for reading.
class PayloadReader {
 public:
  // Fails on a payload that is not a whole number of words or whose segment
  // table is inconsistent.
  static Result<PayloadReader> open(std::string_view payload);
  PayloadReader(PayloadReader &&) = default;
  PayloadReader &operator=(PayloadReader &&) = default;
  ~PayloadReader();

  template <class T>
  typename T::Reader root() {
    return reader_->getRoot<T>();
  }

 private:
  PayloadReader() = default;
  kj::Array<capnp::word> words_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
};

// Runs fn(root) on the message's payload read as T, turning any decoding
// exception into an error that names `what` (e.g. "OpRequest from osd.2").
template <class T, class Fn>
Status read_message(const Message &m, std::string_view what, Fn &&fn) {
  auto r = PayloadReader::open(m.payload);
  if (!r.ok()) return Status::Error(EBADMSG, std::string(what) + ": " + r.status().message());
  try {
    return std::forward<Fn>(fn)(r.value().template root<T>());
  } catch (const kj::Exception &e) {
    return Status::Error(EBADMSG, std::string(what) + ": malformed payload: " +
                                      e.getDescription().cStr());
  }
}

// The segment a payload field refers to, or an error for a bad index.
Result<std::string_view> segment(const Message &m, int32_t index, std::string_view what);

}  // namespace strata::msg
