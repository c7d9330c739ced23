#include "osd/object_digest.h"

#include <xxhash.h>

#include <memory>

#include "msg/crc32c.h"

namespace strata::osd {

namespace {

constexpr uint64_t kReadChunk = 4u << 20;
constexpr uint64_t kOmapPage = 1024;

struct StateDeleter {
  void operator()(XXH3_state_t *s) const { XXH3_freeState(s); }
};

// Length-prefixed, so that ("ab","c") and ("a","bc") hash differently.
void feed(XXH3_state_t *h, std::string_view s) {
  uint64_t n = s.size();
  XXH3_64bits_update(h, &n, sizeof n);
  XXH3_64bits_update(h, s.data(), s.size());
}

}  // namespace

Result<uint64_t> object_digest(store::Store &store, std::string_view coll, std::string_view oid,
                               uint32_t *data_crc) {
  uint32_t crc = 0;
  std::unique_ptr<XXH3_state_t, StateDeleter> h(XXH3_createState());
  if (!h) return Status::Error(ENOMEM, "digest state");
  XXH3_64bits_reset(h.get());
  auto st = store.stat(coll, oid);
  if (!st.ok()) return st.status();
  uint64_t size = st->size;
  XXH3_64bits_update(h.get(), &size, sizeof size);
  for (uint64_t off = 0; off < size; off += kReadChunk) {
    auto d = store.read(coll, oid, off, kReadChunk);
    if (!d.ok()) return d.status().Context("reading " + std::string(oid));
    XXH3_64bits_update(h.get(), d->data(), d->size());
    if (data_crc) crc = msg::crc32c_extend(crc, d->data(), d->size());
    if (d->empty()) break;
  }
  if (data_crc) *data_crc = crc;
  auto attrs = store.getxattrs(coll, oid);
  if (!attrs.ok()) return attrs.status();
  for (const auto &[k, v] : *attrs) {
    feed(h.get(), k);
    feed(h.get(), v);
  }
  auto header = store.omap_get_header(coll, oid);
  if (!header.ok()) return header.status();
  feed(h.get(), *header);
  std::string after;
  for (;;) {
    auto page = store.omap_list(coll, oid, after, {}, kOmapPage);
    if (!page.ok()) return page.status();
    for (const auto &[k, v] : *page) {
      feed(h.get(), k);
      feed(h.get(), v);
    }
    if (page->size() < kOmapPage) break;
    after = page->back().first;
  }
  return static_cast<uint64_t>(XXH3_64bits_digest(h.get()));
}

}  // namespace strata::osd
