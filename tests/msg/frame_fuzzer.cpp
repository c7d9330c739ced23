// libFuzzer entry for the frame decoder (Clang builds only):
//   CC=clang CXX=clang++ cmake -S . -B build-clang -G Ninja && ninja -C build-clang msg_frame_fuzzer
//   build-clang/bin/msg_frame_fuzzer -max_len=4096 CORPUS_DIR
// Input: byte 0 picks the chunk size the stream is fed in (so frames get
// split at every point); byte 1 bit 0 asks for the checksums of the first
// frame to be recomputed before decoding, so the fuzzer gets past the crcs
// and explores lengths, limits and the segment table too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "msg/crc32c.h"
#include "msg/frame.h"

namespace {

uint32_t get32(const std::string &s, std::size_t o) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[o + i]);
  return v;
}
void put32(std::string &s, std::size_t o, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[o + i] = static_cast<char>(v >> (8 * i));
}

// Makes the first frame's crcs right for whatever lengths it declares.
void fix_crcs(std::string &s) {
  using strata::msg::crc32c;
  using strata::msg::crc32c_extend;
  if (s.size() < 32) return;
  put32(s, 0, strata::msg::kFrameMagic);
  std::size_t nseg = static_cast<uint8_t>(s[6]) | (static_cast<uint8_t>(s[7]) << 8);
  std::size_t plen = get32(s, 8), dlen = get32(s, 12);
  std::size_t table_end = 32 + 4 * nseg;
  if (table_end + plen <= s.size()) {
    put32(s, 16, crc32c(s.data() + 32, table_end - 32 + plen));
    if (table_end + plen + dlen <= s.size())
      put32(s, 20, crc32c(s.data() + table_end + plen, dlen));
  }
  put32(s, 28, crc32c(s.data(), 28));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  std::size_t chunk = 1 + data[0] % 64;
  std::string bytes(reinterpret_cast<const char *>(data) + 2, size - 2);
  if (data[1] & 1) fix_crcs(bytes);
  strata::msg::FrameDecoder dec(strata::msg::FrameLimits{1 << 12, 1 << 12, 16});
  std::size_t off = 0;
  while (off < bytes.size()) {
    std::size_t n = std::min(chunk, bytes.size() - off);
    auto used = dec.feed(bytes.data() + off, n);
    if (!used.ok()) break;
    off += used.value();
    if (dec.ready()) dec.take();
  }
  return 0;
}
