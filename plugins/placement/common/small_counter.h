// A tiny fixed-capacity map from item id to a count, on the stack: how often
// one mapping has already been turned away by a failure domain, so that the
// next visit draws a different device inside it.
#pragma once

#include <cstdint>

namespace strata::placement_plugin {

template <int Capacity>
class SmallCounter {
 public:
  uint32_t get(int32_t key) const {
    for (int i = 0; i < n_; ++i)
      if (keys_[i] == key) return counts_[i];
    return 0;
  }
  void bump(int32_t key) {
    for (int i = 0; i < n_; ++i)
      if (keys_[i] == key) {
        ++counts_[i];
        return;
      }
    if (n_ == Capacity) return;  // bounded: beyond it, retries reuse attempt 0
    keys_[n_] = key;
    counts_[n_++] = 1;
  }

 private:
  int n_ = 0;
  int32_t keys_[Capacity];
  uint32_t counts_[Capacity];
};

}  // namespace strata::placement_plugin
