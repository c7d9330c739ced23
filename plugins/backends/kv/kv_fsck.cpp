// KvStore::fsck: one ordered pass over the whole key space checking that
// every key is well formed and that the parts agree with each other:
//   - every onode belongs to an existing collection and decodes;
//   - every payload key (data, header, omap, xattr) belongs to an existing
//     object;
//   - no chunk lies at or beyond its object's size, and none is longer than
//     the chunk size or than the object's remaining bytes;
//   - the object count in the metadata matches the onodes.
// Problems are logged one line each (naming the collection/object); the
// result is their number.
#include <set>

#include "kv/chunk_image.h"
#include "kv/key_layout.h"
#include "kv/kv_store.h"
#include "kv/onode.h"

namespace strata::kv {

namespace {

// Checks of one payload run: consecutive keys of one object.
struct PayloadOwner {
  std::string coll, oid;
  bool exists = false;
  uint64_t size = 0;
  bool reported_missing = false;
};

}  // namespace

int64_t KvStore::fsck() {
  int64_t problems = 0;
  auto problem = [&](const std::string &what) {
    ++problems;
    log_.log(STRATA_LOG_WARN, "kv fsck %s: %s", path_.c_str(), what.c_str());
  };

  std::set<std::string, std::less<>> collections;
  uint64_t onodes = 0;
  std::optional<uint64_t> recorded_objects;
  PayloadOwner owner;
  std::string coll, oid;

  auto it = db_->iterate();
  for (it->seek_to_first(); it->valid(); it->next()) {
    std::string_view key = it->key();
    std::string_view rest = key.substr(1);
    switch (key.empty() ? '\0' : key[0]) {
      case ns::kCollection:
        if (!kvdb::keys::next_component(rest, coll) || !rest.empty())
          problem("malformed collection key");
        else
          collections.insert(coll);
        break;

      case ns::kMeta:
        if (key == meta::kObjects) {
          try {
            recorded_objects = decode_u64(it->value(), "object count");
          } catch (const sdk::Error &e) {
            problem(e.what());
          }
        } else if (key != meta::kFormat && key != meta::kChunkSize && key != meta::kSeq &&
                   key != meta::kCsumBlock) {
          problem("unknown metadata key '" + std::string(rest) + "'");
        }
        break;

      case ns::kOnode:
        if (!kvdb::keys::next_component(rest, coll) || !kvdb::keys::next_component(rest, oid) ||
            !rest.empty()) {
          problem("malformed onode key");
          break;
        }
        ++onodes;
        if (!collections.count(coll))
          problem("object " + describe(coll, oid) + " belongs to a missing collection");
        try {
          decode_onode(it->value(), describe(coll, oid));
        } catch (const sdk::Error &e) {
          problem(e.what());
        }
        break;

      case ns::kPayload: {
        if (!kvdb::keys::next_component(rest, coll) || !kvdb::keys::next_component(rest, oid) ||
            rest.empty()) {
          problem("malformed payload key");
          break;
        }
        if (coll != owner.coll || oid != owner.oid) {
          owner = PayloadOwner{coll, oid};
          std::string bytes;
          if (db_->get(ObjectKeys(coll, oid).onode(), &bytes)) {
            owner.exists = true;
            try {
              owner.size = decode_onode(bytes, describe(coll, oid)).size;
            } catch (const sdk::Error &) {
              owner.exists = false;  // already counted at its onode
              owner.reported_missing = true;
            }
          }
        }
        if (!owner.exists) {
          if (!owner.reported_missing)
            problem("data, xattrs or omap of missing object " + describe(coll, oid));
          owner.reported_missing = true;
          break;
        }
        const char part_tag = rest[0];
        rest.remove_prefix(1);
        if (part_tag == part::kData) {
          uint64_t index = 0;
          if (!kvdb::keys::next_u64(rest, index) || !rest.empty()) {
            problem("malformed chunk key of " + describe(coll, oid));
            break;
          }
          const uint64_t start = index * chunk_size_;
          size_t len = 0;
          try {
            // Every block of the chunk against its checksum.
            len = verified_chunk_bytes(it->value(), csum_block_, start, 0, chunk_size_).size();
          } catch (const sdk::Error &e) {
            problem("object " + describe(coll, oid) + " has a bad block: " + e.what());
            break;
          }
          if (index >= owner.size / chunk_size_ + 1 || start >= owner.size)
            problem("chunk " + std::to_string(index) + " of " + describe(coll, oid) +
                    " lies beyond its size " + std::to_string(owner.size));
          else if (len > chunk_size_ || len > owner.size - start)
            problem("chunk " + std::to_string(index) + " of " + describe(coll, oid) + " holds " +
                    std::to_string(len) + " bytes, past the object's size " +
                    std::to_string(owner.size));
        } else if (part_tag == part::kHeader) {
          if (!rest.empty()) problem("malformed omap header key of " + describe(coll, oid));
        } else if (part_tag != part::kOmap && part_tag != part::kXattr) {
          problem("unknown payload part '" + std::string(1, part_tag) + "' of " +
                  describe(coll, oid));
        }
        break;
      }

      default:
        problem("key outside every namespace (first byte " +
                std::to_string(static_cast<unsigned char>(key.empty() ? 0 : key[0])) + ")");
    }
  }

  if (!recorded_objects)
    problem("metadata object count is missing");
  else if (*recorded_objects != onodes)
    problem("metadata counts " + std::to_string(*recorded_objects) + " objects, found " +
            std::to_string(onodes));
  return problems;
}

}  // namespace strata::kv
