#include "msg/wire_codec.h"

#include <cstring>

namespace strata::msg {

std::string to_payload(capnp::MessageBuilder &builder) {
  // Lay the segment table and segments straight into the string: one copy
  // of the message, no intermediate flat array.
  auto segments = builder.getSegmentsForOutput();
  std::size_t words = 1 + segments.size() / 2;  // table: count, sizes, padding
  for (auto seg : segments) words += seg.size();
  std::string out(words * sizeof(capnp::word), '\0');
  char *p = out.data();
  auto put32 = [&p](uint32_t v) {
    for (int i = 0; i < 4; ++i) *p++ = static_cast<char>(v >> (8 * i));
  };
  put32(static_cast<uint32_t>(segments.size() - 1));
  for (auto seg : segments) put32(static_cast<uint32_t>(seg.size()));
  if (segments.size() % 2 == 0) put32(0);
  for (auto seg : segments) {
    auto b = seg.asBytes();
    std::memcpy(p, b.begin(), b.size());
    p += b.size();
  }
  return out;
}

Message make_message(uint16_t type, capnp::MessageBuilder &builder,
                     std::vector<std::string> segments) {
  Message m;
  m.type = type;
  m.payload = to_payload(builder);
  m.segments = std::move(segments);
  return m;
}

PayloadReader::~PayloadReader() = default;

Result<PayloadReader> PayloadReader::open(std::string_view payload) {
  if (payload.empty() || payload.size() % sizeof(capnp::word) != 0)
    return Status::Error(EBADMSG, "payload of " + std::to_string(payload.size()) +
                                      " bytes is not a whole number of 8-byte words");
  PayloadReader r;
  // The frame's payload string has no alignment guarantee; Cap'n Proto
  // reads words in place, so copy into word-aligned storage.
  r.words_ = kj::heapArray<capnp::word>(payload.size() / sizeof(capnp::word));
  std::memcpy(r.words_.begin(), payload.data(), payload.size());
  capnp::ReaderOptions opts;
  // Bounded by what was received: a payload whose pointers revisit the
  // same bytes over and over (amplification) runs out of budget quickly,
  // while honest readers that touch fields a few times each stay well under.
  opts.traversalLimitInWords = 8 * r.words_.size() + 1024;
  opts.nestingLimit = 64;
  try {
    r.reader_ = std::make_unique<capnp::FlatArrayMessageReader>(r.words_.asPtr(), opts);
    if (r.reader_->getEnd() != r.words_.end())
      return Status::Error(EBADMSG, "payload has " +
                                        std::to_string((r.words_.end() - r.reader_->getEnd()) *
                                                       sizeof(capnp::word)) +
                                        " trailing bytes after the message");
  } catch (const kj::Exception &e) {
    return Status::Error(EBADMSG, std::string("bad payload segment table: ") +
                                      e.getDescription().cStr());
  }
  return r;
}

Result<std::string_view> segment(const Message &m, int32_t index, std::string_view what) {
  if (index < 0 || static_cast<std::size_t>(index) >= m.segments.size())
    return Status::Error(EBADMSG, std::string(what) + ": data segment index " +
                                      std::to_string(index) + " out of range (message has " +
                                      std::to_string(m.segments.size()) + " segments)");
  return std::string_view(m.segments[static_cast<std::size_t>(index)]);
}

}  // namespace strata::msg
