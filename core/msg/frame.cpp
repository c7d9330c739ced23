#include "msg/frame.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "msg/crc32c.h"

namespace strata::msg {

namespace {

void put16(unsigned char *p, uint16_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
}
void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
uint16_t get16(const unsigned char *p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get32(const unsigned char *p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
const unsigned char *bytes(const std::string &s) {
  return reinterpret_cast<const unsigned char *>(s.data());
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

Status check_encodable(const Message &m, const FrameLimits &limits) {
  auto too_big = [&](const std::string &what, std::size_t n, std::size_t limit) {
    return Status::Error(EMSGSIZE, "message type " + std::to_string(m.type) + ": " + what + " " +
                                       std::to_string(n) + " exceeds the limit of " +
                                       std::to_string(limit));
  };
  constexpr std::size_t kU32 = std::numeric_limits<uint32_t>::max();
  constexpr std::size_t kU16 = std::numeric_limits<uint16_t>::max();
  if (m.payload.size() > std::min(limits.max_payload, kU32))
    return too_big("payload bytes", m.payload.size(), std::min(limits.max_payload, kU32));
  if (m.segments.size() > std::min(limits.max_segments, kU16))
    return too_big("data segments", m.segments.size(), std::min(limits.max_segments, kU16));
  std::size_t data = 0;
  for (const auto &s : m.segments) data += s.size();
  if (data > std::min(limits.max_data, kU32))
    return too_big("data bytes", data, std::min(limits.max_data, kU32));
  return Status::OK();
}

FrameHead encode_frame_head(const Message &m) {
  FrameHead h;
  h.table.resize(4 * m.segments.size());
  auto *table = reinterpret_cast<unsigned char *>(h.table.data());
  uint32_t data_len = 0;
  uint32_t data_crc = 0;
  for (std::size_t i = 0; i < m.segments.size(); ++i) {
    const std::string &s = m.segments[i];
    put32(table + 4 * i, static_cast<uint32_t>(s.size()));
    data_len += static_cast<uint32_t>(s.size());
    data_crc = crc32c_extend(data_crc, s.data(), s.size());
  }
  uint32_t payload_crc = crc32c(h.table.data(), h.table.size());
  payload_crc = crc32c_extend(payload_crc, m.payload.data(), m.payload.size());

  unsigned char *p = h.header.data();
  put32(p + 0, kFrameMagic);
  put16(p + 4, m.type);
  put16(p + 6, static_cast<uint16_t>(m.segments.size()));
  put32(p + 8, static_cast<uint32_t>(m.payload.size()));
  put32(p + 12, data_len);
  put32(p + 16, payload_crc);
  put32(p + 20, data_crc);
  put32(p + 24, 0);
  put32(p + 28, crc32c(p, 28));
  return h;
}

std::string encode_frame(const Message &m) {
  FrameHead h = encode_frame_head(m);
  std::string out(reinterpret_cast<const char *>(h.header.data()), h.header.size());
  out += h.table;
  out += m.payload;
  for (const auto &s : m.segments) out += s;
  return out;
}

FrameDecoder::FrameDecoder(FrameLimits limits) : limits_(limits) {}

std::size_t FrameDecoder::stage_size() const {
  switch (stage_) {
    case Stage::kHeader: return kFrameHeaderSize;
    case Stage::kTable: return table_.size();
    case Stage::kPayload: return payload_len_;
    case Stage::kSegment: return get32(bytes(table_) + 4 * segment_);
    default: return 0;
  }
}

std::span<char> FrameDecoder::want() {
  char *base = nullptr;
  switch (stage_) {
    case Stage::kHeader: base = reinterpret_cast<char *>(header_.data()); break;
    case Stage::kTable: base = table_.data(); break;
    case Stage::kPayload: base = msg_.payload.data(); break;
    case Stage::kSegment: base = msg_.segments[segment_].data(); break;
    default: return {};
  }
  return {base + filled_, stage_size() - filled_};
}

Status FrameDecoder::commit(std::size_t n) {
  if (failed()) return error_;
  std::span<char> w = want();
  if (n > w.size())
    return Status::Error(EINVAL, "frame decoder: commit of " + std::to_string(n) +
                                     " bytes exceeds the " + std::to_string(w.size()) + " wanted");
  if (n == 0) return Status::OK();
  // Checksums run over the bytes just received, while they are in cache.
  if (stage_ == Stage::kTable || stage_ == Stage::kPayload)
    payload_crc_run_ = crc32c_extend(payload_crc_run_, w.data(), n);
  else if (stage_ == Stage::kSegment)
    data_crc_run_ = crc32c_extend(data_crc_run_, w.data(), n);
  filled_ += n;
  // Reject a stream that is not ours as soon as the magic is in, rather
  // than waiting for a whole header that may never come.
  if (stage_ == Stage::kHeader && filled_ >= 4 && filled_ - n < 4) {
    Status s = check_magic();
    if (!s.ok()) return s;
  }
  if (filled_ < stage_size()) return Status::OK();
  return advance();
}

Result<std::size_t> FrameDecoder::feed(const void *data, std::size_t len) {
  const char *p = static_cast<const char *>(data);
  std::size_t used = 0;
  while (used < len && !ready()) {
    if (failed()) return error_;
    std::span<char> w = want();
    std::size_t n = std::min(w.size(), len - used);
    std::memcpy(w.data(), p + used, n);
    used += n;
    Status s = commit(n);
    if (!s.ok()) return s;
  }
  if (failed()) return error_;
  return used;
}

Message FrameDecoder::take() {
  Message m = std::move(msg_);
  msg_ = Message{};
  table_.clear();
  stage_ = Stage::kHeader;
  filled_ = 0;
  return m;
}

Status FrameDecoder::fail(std::string what) {
  stage_ = Stage::kFailed;
  error_ = Status::Error(EBADMSG, std::move(what));
  return error_;
}

Status FrameDecoder::check_magic() {
  uint32_t magic = get32(header_.data());
  if (magic != kFrameMagic)
    return fail("bad frame magic " + hex32(magic) + " (expected " + hex32(kFrameMagic) +
                " \"STRM\")");
  return Status::OK();
}

Status FrameDecoder::finish_header() {
  const unsigned char *p = header_.data();
  uint32_t want_crc = get32(p + 28);
  uint32_t got_crc = crc32c(p, 28);
  if (want_crc != got_crc)
    return fail("frame header crc mismatch: header says " + hex32(want_crc) + ", computed " +
                hex32(got_crc));
  msg_.type = get16(p + 4);
  n_segments_ = get16(p + 6);
  payload_len_ = get32(p + 8);
  data_len_ = get32(p + 12);
  payload_crc_ = get32(p + 16);
  data_crc_ = get32(p + 20);
  std::string what = "frame type " + std::to_string(msg_.type) + ": ";
  if (payload_len_ > limits_.max_payload)
    return fail(what + "payload too large: " + std::to_string(payload_len_) +
                " bytes, limit " + std::to_string(limits_.max_payload));
  if (n_segments_ > limits_.max_segments)
    return fail(what + "too many data segments: " + std::to_string(n_segments_) + ", limit " +
                std::to_string(limits_.max_segments));
  if (data_len_ > limits_.max_data)
    return fail(what + "data too large: " + std::to_string(data_len_) + " bytes, limit " +
                std::to_string(limits_.max_data));
  table_.assign(4 * std::size_t{n_segments_}, '\0');
  payload_crc_run_ = 0;
  data_crc_run_ = 0;
  return Status::OK();
}

Status FrameDecoder::finish_table() {
  uint64_t sum = 0;
  for (std::size_t i = 0; i < n_segments_; ++i) sum += get32(bytes(table_) + 4 * i);
  if (sum != data_len_)
    return fail("frame type " + std::to_string(msg_.type) + ": segment lengths add up to " +
                std::to_string(sum) + " bytes but the header says data_len " +
                std::to_string(data_len_));
  msg_.segments.resize(n_segments_);
  return Status::OK();
}

Status FrameDecoder::advance() {
  // Leave the finished stage, then skip stages with nothing to receive
  // (no segments, empty payload, empty segments) so want() is never empty
  // in the middle of a frame.
  do {
    filled_ = 0;
    switch (stage_) {
      case Stage::kHeader: {
        Status s = finish_header();
        if (!s.ok()) return s;
        stage_ = Stage::kTable;
        break;
      }
      case Stage::kTable: {
        Status s = finish_table();
        if (!s.ok()) return s;
        msg_.payload.resize(payload_len_);
        stage_ = Stage::kPayload;
        break;
      }
      case Stage::kPayload:
        if (payload_crc_run_ != payload_crc_)
          return fail("frame type " + std::to_string(msg_.type) +
                      ": payload crc mismatch: header says " + hex32(payload_crc_) +
                      ", computed " + hex32(payload_crc_run_));
        segment_ = 0;
        stage_ = Stage::kSegment;
        break;
      case Stage::kSegment:
        ++segment_;
        break;
      default:
        return Status::OK();
    }
    if (stage_ == Stage::kSegment) {
      if (segment_ == n_segments_) {
        if (data_crc_run_ != data_crc_)
          return fail("frame type " + std::to_string(msg_.type) +
                      ": data crc mismatch: header says " + hex32(data_crc_) + ", computed " +
                      hex32(data_crc_run_));
        stage_ = Stage::kReady;
        return Status::OK();
      }
      msg_.segments[segment_].resize(stage_size());
    }
  } while (stage_size() == 0);
  return Status::OK();
}

}  // namespace strata::msg
