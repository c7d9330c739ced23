#include "object_cow.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "image_format.h"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {

void add_preserved_keys(const strata_client_api *strata_api, strata_write_op_t op,
                        uint64_t snap_seq, const std::string &clone_value) {
  const std::string seq = format::encode_u64(snap_seq);
  const std::string ck = format::clone_key(snap_seq);
  strata_bytes keys[2] = {{format::kObjSnapSeq, std::strlen(format::kObjSnapSeq)},
                          {ck.data(), ck.size()}};
  strata_bytes vals[2] = {{seq.data(), seq.size()}, {clone_value.data(), clone_value.size()}};
  strata_write_op_omap_set(op, keys, vals, 2);
}

// The head's state: exists, its version and size, the snapshot it was last
// preserved for. rc -ENOENT when missing.
struct HeadState {
  int rc = 0;
  uint64_t version = 0;
  uint64_t size = 0;
  uint64_t snapseq = 0;
};

HeadState read_head_state(const strata_client_api *strata_api, strata_ioctx_t io,
                          const std::string &oid) {
  HeadState h;
  strata_read_op_t op = strata_read_op_new();
  strata_bytes key{format::kObjSnapSeq, std::strlen(format::kObjSnapSeq)};
  strata_omap_iter_t it = nullptr;
  int omap_rc = 0, stat_rc = 0;
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  strata_read_op_stat(op, &st, &stat_rc);
  strata_read_op_omap_get_keys(op, &key, 1, &it, &omap_rc);
  h.rc = strata_read_op_operate(op, io, oid.c_str(), &h.version);
  strata_read_op_release(op);
  if (h.rc == 0) {
    h.size = st.size;
    h.version = st.version ? st.version : h.version;
    const void *kp, *vp;
    size_t kl, vl;
    if (it && strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1)
      h.snapseq =
          format::decode_u64(std::string_view(static_cast<const char *>(vp), vl)).value_or(0);
  }
  if (it) strata_omap_iter_end(it);
  return h;
}

}  // namespace

void add_object_mutation(const strata_client_api *strata_api, strata_write_op_t op,
                         const ObjectMutation &m) {
  switch (m.kind) {
    case ObjectMutation::Kind::kWrite:
      strata_write_op_write(op, m.data, m.len, m.off);
      break;
    case ObjectMutation::Kind::kWriteFull:
      strata_write_op_write_full(op, m.data, m.len);
      break;
    case ObjectMutation::Kind::kZero:
      strata_write_op_zero(op, m.off, m.len);
      break;
    case ObjectMutation::Kind::kTruncate:
      strata_write_op_truncate(op, m.len);
      break;
  }
}

int mutate_preserving(const ObjectRef &obj, uint64_t snap_seq, const ObjectMutation &m,
                      bool *copied, bool *preserved) {
  const strata_client_api *strata_api = obj.api;
  const std::string oid = format::data_oid(obj.image_id, obj.objno);
  *copied = false;
  if (preserved) *preserved = false;
  for (int attempt = 0; attempt < 50; ++attempt) {
    const HeadState head = read_head_state(strata_api, obj.io, oid);
    const bool creates = m.kind == ObjectMutation::Kind::kWrite ||
                         m.kind == ObjectMutation::Kind::kWriteFull;
    if (head.rc == -ENOENT && !creates) return 0;
    if (head.rc < 0 && head.rc != -ENOENT) return head.rc;
    strata_write_op_t op = strata_write_op_new();
    if (!op) return -ENOMEM;
    strata_write_op_assert_version(op, head.rc == -ENOENT ? 0 : head.version);
    if (head.rc == -ENOENT) {
      if (snap_seq > 0) add_preserved_keys(strata_api, op, snap_seq, format::kCloneAbsent);
    } else if (head.snapseq < snap_seq) {
      // Copy the head as it is now to <oid>@<snap_seq>, then change the
      // head only if it is still the version we copied.
      std::vector<char> data(head.size);
      strata_read_op_t rop = strata_read_op_new();
      size_t got = 0;
      int read_rc = 0;
      strata_read_op_assert_version(rop, head.version);
      strata_read_op_read(rop, 0, data.size(), data.data(), &got, &read_rc);
      int rc = strata_read_op_operate(rop, obj.io, oid.c_str(), nullptr);
      strata_read_op_release(rop);
      if (rc == -ERANGE || rc == -ENOENT) {
        strata_write_op_release(op);
        continue;
      }
      if (rc < 0) {
        strata_write_op_release(op);
        return rc;
      }
      const std::string copy = format::snap_copy_oid(obj.image_id, obj.objno, snap_seq);
      rc = strata_write_full(obj.io, copy.c_str(), data.data(), got);
      if (rc < 0) {
        strata_write_op_release(op);
        return rc;
      }
      *copied = true;
      add_preserved_keys(strata_api, op, snap_seq, "");
    }
    add_object_mutation(strata_api, op, m);
    const int rc = strata_write_op_operate(op, obj.io, oid.c_str(), nullptr);
    strata_write_op_release(op);
    if (rc == -ERANGE) continue;  // changed between our read and write: again
    if (rc == 0 && preserved) *preserved = true;
    return rc;
  }
  return -EAGAIN;
}

int read_snapshot_object(const ObjectRef &obj, uint64_t snap_id, uint64_t off, uint64_t len,
                         char *out) {
  const strata_client_api *strata_api = obj.api;
  const std::string oid = format::data_oid(obj.image_id, obj.objno);
  std::memset(out, 0, len);
  strata_read_op_t op = strata_read_op_new();
  if (!op) return -ENOMEM;
  const std::string first = format::kClonePrefix;  // keys after "clone_"...
  const std::string end = "clone`";                // ...and before "clone`" ('`' follows '_')
  strata_omap_iter_t it = nullptr;
  int omap_rc = 0, read_rc = 0;
  size_t got = 0;
  strata_read_op_omap_list(op, first.data(), first.size(), end.data(), end.size(), 1000, &it,
                           &omap_rc);
  strata_read_op_read(op, off, len, out, &got, &read_rc);
  const int rc = strata_read_op_operate(op, obj.io, oid.c_str(), nullptr);
  strata_read_op_release(op);
  if (rc == -ENOENT) {
    if (it) strata_omap_iter_end(it);
    return 0;
  }
  if (rc < 0) {
    if (it) strata_omap_iter_end(it);
    return rc;
  }
  // The smallest preserved state at or after the snapshot decides.
  std::optional<uint64_t> clone_id;
  std::string clone_value;
  const void *kp, *vp;
  size_t kl, vl;
  while (it && strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1) {
    std::string_view key(static_cast<const char *>(kp), kl);
    auto id = format::parse_hex16(key.substr(first.size()));
    if (!id || *id < snap_id) continue;
    if (!clone_id || *id < *clone_id) {
      clone_id = *id;
      clone_value.assign(static_cast<const char *>(vp), vl);
    }
  }
  if (it) strata_omap_iter_end(it);
  if (!clone_id) return 0;  // unchanged since the snapshot: the head's data
  std::memset(out, 0, len);
  if (clone_value == format::kCloneAbsent) return 0;
  const std::string copy = format::snap_copy_oid(obj.image_id, obj.objno, *clone_id);
  const int64_t n = strata_read(obj.io, copy.c_str(), out, len, off);
  if (n == -ENOENT) return 0;
  if (n < 0) return static_cast<int>(n);
  if (static_cast<uint64_t>(n) < len) std::memset(out + n, 0, len - n);
  return 0;
}

}  // namespace strata::rbd
