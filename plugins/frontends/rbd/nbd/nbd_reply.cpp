#include "nbd_reply.h"

#include <algorithm>
#include <cstring>

#include "nbd_protocol.h"

namespace strata::rbd::nbd {

namespace {

bool all_zero(const char *p, size_t n) {
  return n == 0 || (p[0] == 0 && std::memcmp(p, p + 1, n - 1) == 0);
}

}  // namespace

void Reply::add(const std::string &bytes) {
  owned_.push_back(bytes);
  iov_.push_back({owned_.back().data(), owned_.back().size()});
}

void Reply::add(const char *data, size_t len) {
  if (len) iov_.push_back({const_cast<char *>(data), len});
}

void Reply::simple(uint64_t cookie, uint32_t error, const char *data, size_t len) {
  std::string h;
  put32(h, kSimpleReplyMagic);
  put32(h, error);
  put64(h, cookie);
  add(h);
  add(data, len);
}

void Reply::chunk(uint64_t cookie, uint16_t type, bool done, const std::string &head,
                  const char *data, size_t len) {
  std::string h;
  put32(h, kStructuredReplyMagic);
  put16(h, done ? kReplyFlagDone : 0);
  put16(h, type);
  put64(h, cookie);
  put32(h, uint32_t(head.size() + len));
  h += head;
  add(h);
  add(data, len);
}

void structured_read(Reply *r, uint64_t cookie, uint64_t offset, const char *data, uint32_t len,
                     uint32_t granule, bool dont_fragment) {
  struct Run {
    uint32_t start, len;
    bool zero;
  };
  std::vector<Run> runs;
  auto push = [&](uint32_t start, uint32_t n, bool zero) {
    if (!runs.empty() && runs.back().zero == zero) {
      runs.back().len += n;
    } else {
      runs.push_back({start, n, zero});
    }
  };
  if (dont_fragment || granule == 0) {
    push(0, len, false);
  } else {
    // Granules aligned on the device's address space; a partial one at
    // either end is always sent as data.
    for (uint32_t pos = 0; pos < len;) {
      uint64_t abs = offset + pos;
      uint32_t n = uint32_t(std::min<uint64_t>(len - pos, granule - abs % granule));
      bool zero = n == granule && all_zero(data + pos, n);
      push(pos, n, zero);
      pos += n;
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run &run = runs[i];
    bool done = i + 1 == runs.size();
    std::string head;
    put64(head, offset + run.start);
    if (run.zero) {
      put32(head, run.len);
      r->chunk(cookie, kReplyTypeOffsetHole, done, head);
    } else {
      r->chunk(cookie, kReplyTypeOffsetData, done, head, data + run.start, run.len);
    }
  }
}

void structured_error(Reply *r, uint64_t cookie, uint32_t error, const std::string &message) {
  std::string head;
  put32(head, error);
  put16(head, uint16_t(std::min<size_t>(message.size(), 4096)));
  head.append(message, 0, std::min<size_t>(message.size(), 4096));
  r->chunk(cookie, kReplyTypeError, true, head);
}

bool structured_block_status(Reply *r, uint64_t cookie, uint32_t context_id, uint64_t offset,
                             uint32_t len, const std::vector<Extent> &extents, bool req_one) {
  struct Desc {
    uint64_t len;
    uint32_t flags;
  };
  std::vector<Desc> descs;
  uint64_t end = offset + len, pos = offset;
  for (const Extent &e : extents) {
    uint64_t from = std::max(pos, e.offset), to = std::min(end, e.offset + e.length);
    if (to <= from || from != pos) break;  // a gap or disorder: stop at what is known
    uint32_t flags = (e.hole ? kStateHole | kStateZero : 0) | (e.zero ? kStateZero : 0);
    if (!descs.empty() && descs.back().flags == flags) {
      descs.back().len += to - from;
    } else {
      descs.push_back({to - from, flags});
    }
    pos = to;
    if (req_one) break;
  }
  if (descs.empty()) return false;
  std::string head;
  put32(head, context_id);
  for (const Desc &d : descs) {
    put32(head, uint32_t(d.len));
    put32(head, d.flags);
    if (req_one) break;
  }
  r->chunk(cookie, kReplyTypeBlockStatus, true, head);
  return true;
}

}  // namespace strata::rbd::nbd
