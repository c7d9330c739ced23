#include "kv/chunk_reader.h"

#include <algorithm>
#include <cstring>

#include "kv/chunk_image.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::kv {

namespace {

// Copies the part of one chunk that overlaps the requested range, zeroing
// the gap since the previous copy; `pos` is the absolute offset filled so far.
class RangeFiller {
 public:
  RangeFiller(uint64_t offset, uint64_t length, char *out)
      : offset_(offset), end_(offset + length), pos_(offset), out_(out) {}

  void add(uint64_t chunk_start, std::string_view bytes) {
    uint64_t from = std::max(chunk_start, pos_);
    uint64_t to = std::min(chunk_start + bytes.size(), end_);
    if (from >= to) return;
    zero_until(from);
    std::memcpy(out_ + (from - offset_), bytes.data() + (from - chunk_start), to - from);
    pos_ = to;
  }
  void finish() { zero_until(end_); }

 private:
  void zero_until(uint64_t abs) {
    if (abs > pos_) std::memset(out_ + (pos_ - offset_), 0, abs - pos_);
    pos_ = std::max(pos_, abs);
  }

  uint64_t offset_, end_, pos_;
  char *out_;
};

}  // namespace

void read_chunks(const kvdb::Database &db, const ObjectKeys &obj, uint64_t chunk_size,
                 uint64_t csum_block, uint64_t offset, uint64_t length, char *out) {
  if (length == 0) return;
  RangeFiller fill(offset, length, out);
  // The chunk's bytes, its blocks that overlap the range verified.
  auto bytes_of = [&](uint64_t index, std::string_view stored) {
    const uint64_t start = index * chunk_size;
    const uint64_t begin = std::max(offset, start) - start;
    const uint64_t end = std::min(offset + length, start + chunk_size) - start;
    return verified_chunk_bytes(stored, csum_block, start, begin, end);
  };
  const uint64_t first = offset / chunk_size;
  const uint64_t last = (offset + length - 1) / chunk_size;
  if (first == last) {
    std::string bytes;
    if (db.get(obj.chunk(first), &bytes))
      fill.add(first * chunk_size, bytes_of(first, bytes));
  } else {
    auto it = db.iterate({obj.chunk(first), obj.chunk(last + 1)});
    const size_t index_at = obj.payload().size() + 1;  // after the 'D' part tag
    for (it->seek_to_first(); it->valid(); it->next()) {
      std::string_view suffix = it->key().substr(index_at);
      uint64_t index = 0;
      if (!kvdb::keys::next_u64(suffix, index) || !suffix.empty())
        throw sdk::Error(EUCLEAN, "malformed chunk key in object data");
      fill.add(index * chunk_size, bytes_of(index, it->value()));
    }
  }
  fill.finish();
}

}  // namespace strata::kv
