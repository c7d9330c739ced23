// The frame: how one Message travels on a connection.
//
//   header, 32 bytes, little-endian:
//     0  magic        u32  "STRM" (the bytes 'S','T','R','M')
//     4  type         u16  message_types.h
//     6  n_segments   u16  data segments after the payload
//     8  payload_len  u32  Cap'n Proto payload bytes
//    12  data_len     u32  all data segments together
//    16  payload_crc  u32  crc32c of the segment-length table + payload
//    20  data_crc     u32  crc32c of the data segments, in order
//    24  reserved     u32  0 when sent; ignored when received (future use)
//    28  header_crc   u32  crc32c of bytes 0..27
//   segment-length table: n_segments x u32
//   payload (payload_len bytes), then each data segment.
//
// Bulk data stays in its own segments: the sender writes header, table,
// payload and segments with one gather write, never copying the data into
// the Cap'n Proto message. Pure code, no sockets: the decoder is fuzzed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"
#include "msg/messenger.h"

namespace strata::msg {

inline constexpr uint32_t kFrameMagic = 0x4D525453u;  // "STRM" read as LE u32
inline constexpr std::size_t kFrameHeaderSize = 32;

// What a receiver accepts (MessengerOptions, or tighter before auth).
struct FrameLimits {
  std::size_t max_payload = 4u << 20;
  std::size_t max_data = 256u << 20;
  std::size_t max_segments = 1024;
};

// The header and segment-length table of one message, written before its
// payload and segments.
struct FrameHead {
  std::array<unsigned char, kFrameHeaderSize> header{};
  std::string table;  // n_segments little-endian u32
};

// OK when `m` fits the wire format and `limits`; otherwise says what is too
// big, naming the message type.
Status check_encodable(const Message &m, const FrameLimits &limits);
// Header + table for `m` (which must pass check_encodable); computes the crcs.
FrameHead encode_frame_head(const Message &m);
// The whole frame in one string (tests, fuzz corpora, tools).
std::string encode_frame(const Message &m);

// Incremental frame decoder: bytes in, checked Messages out. Either copy
// bytes in with feed(), or let the caller read straight into the frame's
// own buffers with want()/commit() (the messenger does this for large
// payloads and segments so bulk data is received without an extra copy).
// After the first error the decoder stays failed: a stream with one bad
// frame cannot be resynchronised.
class FrameDecoder {
 public:
  explicit FrameDecoder(FrameLimits limits = {});

  // Limits for frames whose header has not been read yet.
  void set_limits(const FrameLimits &limits) { limits_ = limits; }
  const FrameLimits &limits() const { return limits_; }

  // Copies bytes in, stopping at the end of a frame; returns how many were
  // used. When ready(), take() the frame and feed the rest.
  Result<std::size_t> feed(const void *data, std::size_t len);

  // Where the next bytes belong (at most want().size() of them); empty when
  // ready() or failed(). After writing n bytes there, commit(n).
  std::span<char> want();
  Status commit(std::size_t n);

  bool ready() const { return stage_ == Stage::kReady; }
  Message take();  // requires ready()

  bool failed() const { return stage_ == Stage::kFailed; }
  const Status &error() const { return error_; }
  // True between frames (nothing of the next frame received yet).
  bool at_frame_boundary() const { return stage_ == Stage::kHeader && filled_ == 0; }

 private:
  enum class Stage { kHeader, kTable, kPayload, kSegment, kReady, kFailed };

  std::size_t stage_size() const;
  // Finishes the current stage and enters the next non-empty one.
  Status advance();
  Status check_magic();  // once the first 4 header bytes are in
  Status finish_header();
  Status finish_table();
  Status fail(std::string what);

  FrameLimits limits_;
  Stage stage_ = Stage::kHeader;
  std::size_t filled_ = 0;      // bytes of the current stage received
  std::size_t segment_ = 0;     // current segment index in kSegment
  std::array<unsigned char, kFrameHeaderSize> header_{};
  std::string table_;
  uint16_t n_segments_ = 0;
  uint32_t payload_len_ = 0, data_len_ = 0, payload_crc_ = 0, data_crc_ = 0;
  uint32_t payload_crc_run_ = 0, data_crc_run_ = 0;
  Message msg_;
  Status error_;
};

}  // namespace strata::msg
