// The medium a journal lives on: the only thing the `file` and `tmpfs`
// plugins implement themselves. Everything above it (format, replay, group
// commit) is shared.
//
// Threading: the log uses a Media from one thread at a time (replay, then
// the writer thread), so implementations need no locking.
// Errors: every method throws strata::sdk::Error with the path and offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace strata::journal {

// One contiguous write: `len` bytes from `data` at byte `offset` of the medium.
struct WriteRun {
  uint64_t offset;
  const void *data;
  size_t len;
};

class Media {
 public:
  virtual ~Media() = default;

  // Bytes addressable on the medium.
  virtual uint64_t size() const = 0;
  // Offsets, lengths and buffer addresses of read/write must be multiples of
  // this (O_DIRECT); 1 when anything goes.
  virtual uint32_t alignment() const = 0;
  // For error messages and logs, e.g. the file path.
  virtual const std::string &name() const = 0;

  virtual void read(uint64_t offset, void *buf, size_t len) = 0;
  virtual void write(uint64_t offset, const void *buf, size_t len) = 0;
  // Makes every completed write durable.
  virtual void flush() = 0;
  // The first offset at or after `offset` that may hold written bytes:
  // size() when the rest is a hole, `offset` itself when the medium cannot
  // tell (the default). Lets replay's search past the log's end skip space
  // no record was ever written to. Never throws: on any doubt, `offset`.
  virtual uint64_t next_data(uint64_t offset) const { return offset; }

  // Writes every run, then makes them durable; returns when they are. The
  // default issues the writes one by one and then flushes; a medium with
  // asynchronous I/O submits them all at once.
  virtual void write_durable(std::span<const WriteRun> runs) {
    for (const WriteRun &r : runs) write(r.offset, r.data, r.len);
    flush();
  }
};

}  // namespace strata::journal
