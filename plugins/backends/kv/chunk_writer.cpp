#include "kv/chunk_writer.h"

#include <algorithm>
#include <cstring>

#include "kv/key_erase.h"

namespace strata::kv {

namespace {

bool all_zero(std::string_view s) {
  return s.empty() || (s[0] == '\0' && std::memcmp(s.data(), s.data() + 1, s.size() - 1) == 0);
}

// Up to this many chunks are deleted by key without looking; beyond it one
// scan finds the chunks that actually exist (large objects are often sparse).
constexpr uint64_t kBlindDeleteChunks = 16;

}  // namespace

void ChunkWriter::write(const ObjectKeys &obj, uint64_t size, uint64_t offset,
                        std::string_view data) {
  if (data.empty()) return;
  const uint64_t end = offset + data.size();
  for (uint64_t index = offset / chunk_size_; index <= (end - 1) / chunk_size_; ++index) {
    const uint64_t chunk_start = index * chunk_size_;
    const uint64_t begin_in = std::max(offset, chunk_start) - chunk_start;
    const uint64_t end_in = std::min(end, chunk_start + chunk_size_) - chunk_start;
    // Existing content of this chunk can only lie below the object's size.
    const uint64_t content_end = size > chunk_start ? std::min(chunk_size_, size - chunk_start) : 0;

    std::string key = obj.chunk(index);
    std::string stored;
    bool replaces_all = begin_in == 0 && end_in >= content_end;
    if (!replaces_all) txn_.get(key, &stored);
    ChunkImage chunk(std::move(stored), csum_block_, chunk_start);
    chunk.overwrite(begin_in,
                    data.substr(chunk_start + begin_in - offset, end_in - begin_in));
    store(std::move(key), std::move(chunk), content_end > 0);
  }
}

void ChunkWriter::zero(const ObjectKeys &obj, uint64_t size, uint64_t offset, uint64_t length) {
  if (offset >= size) return;
  const uint64_t end = length > size - offset ? size : offset + length;
  const uint64_t first = offset / chunk_size_;
  const uint64_t last = (end - 1) / chunk_size_;

  auto zero_part = [&](uint64_t index) {
    const uint64_t chunk_start = index * chunk_size_;
    zero_within_chunk(obj, index, std::max(offset, chunk_start) - chunk_start,
                      std::min(end, chunk_start + chunk_size_) - chunk_start,
                      std::min(chunk_size_, size - chunk_start));
  };
  zero_part(first);
  if (last > first) {
    if (last - first > 1) erase_chunks(obj, first + 1, last);
    zero_part(last);
  }
}

void ChunkWriter::zero_within_chunk(const ObjectKeys &obj, uint64_t index, uint64_t begin,
                                    uint64_t end, uint64_t content_end) {
  std::string key = obj.chunk(index);
  if (begin == 0 && end >= content_end) {
    txn_.del(key);
    return;
  }
  std::string stored;
  if (!txn_.get(key, &stored)) return;
  ChunkImage chunk(std::move(stored), csum_block_, index * chunk_size_);
  if (begin >= chunk.bytes().size()) return;
  if (end >= chunk.bytes().size())
    chunk.resize(begin);  // the zeroed tail need not be stored
  else
    chunk.zero(begin, end);
  store(std::move(key), std::move(chunk), true);
}

void ChunkWriter::truncate(const ObjectKeys &obj, uint64_t size, uint64_t new_size) {
  if (new_size >= size) return;
  const uint64_t keep = chunk_count(new_size);
  const uint64_t had = chunk_count(size);
  if (had > keep) erase_chunks(obj, keep, had);
  if (const uint64_t tail = new_size % chunk_size_; tail != 0) {
    std::string key = obj.chunk(new_size / chunk_size_);
    std::string stored;
    if (txn_.get(key, &stored)) {
      ChunkImage chunk(std::move(stored), csum_block_, new_size / chunk_size_ * chunk_size_);
      if (chunk.bytes().size() > tail) {
        chunk.resize(tail);
        store(std::move(key), std::move(chunk), true);
      }
    }
  }
}

void ChunkWriter::erase_all(const ObjectKeys &obj, uint64_t size) {
  erase_chunks(obj, 0, chunk_count(size));
}

void ChunkWriter::erase_chunks(const ObjectKeys &obj, uint64_t first, uint64_t end_index) {
  if (end_index <= first) return;
  if (end_index - first <= kBlindDeleteChunks) {
    for (uint64_t i = first; i < end_index; ++i) txn_.del(obj.chunk(i));
    return;
  }
  erase_keys(txn_, obj.chunk(first), obj.chunk(end_index));
}

void ChunkWriter::store(std::string &&key, ChunkImage &&chunk, bool may_exist) {
  poisoned_blocks_ += chunk.poisoned_blocks();
  if (!all_zero(chunk.bytes()))
    txn_.put(std::move(key), std::move(chunk).encode());
  else if (may_exist)
    txn_.del(key);
}

}  // namespace strata::kv
