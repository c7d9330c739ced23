// A zero-initialised heap buffer with a chosen alignment, for O_DIRECT I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace strata::journal {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(size_t size, size_t alignment) { reset(size, alignment); }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(AlignedBuffer &&o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer &operator=(AlignedBuffer &&o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }

  // Replaces the content with `size` zero bytes aligned to `alignment`
  // (a power of two). Throws std::bad_alloc.
  void reset(size_t size, size_t alignment) {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    if (rounded == 0) rounded = alignment;
    data_ = static_cast<uint8_t *>(std::aligned_alloc(alignment, rounded));
    if (!data_) throw std::bad_alloc();
    std::memset(data_, 0, rounded);
    size_ = size;
  }
  // Grows (contents lost) when smaller than `size`; never shrinks.
  void ensure(size_t size, size_t alignment) {
    if (size > size_) reset(size, alignment);
  }

  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace strata::journal
