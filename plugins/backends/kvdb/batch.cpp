#include "kvdb/kvdb.h"

namespace strata::kvdb {

void Batch::put(std::string_view key, std::string_view value) {
  put_owned(std::string(key), std::string(value));
}

void Batch::put_owned(std::string &&key, std::string &&value) {
  bytes_ += key.size() + value.size();
  ops_.push_back({OpType::put, std::move(key), std::move(value)});
}

void Batch::del(std::string_view key) {
  bytes_ += key.size();
  ops_.push_back({OpType::del, std::string(key), {}});
}

void Batch::delete_range(std::string_view begin, std::string_view end) {
  bytes_ += begin.size() + end.size();
  ops_.push_back({OpType::delete_range, std::string(begin), std::string(end)});
}

void Batch::clear() {
  ops_.clear();
  bytes_ = 0;
}

}  // namespace strata::kvdb
