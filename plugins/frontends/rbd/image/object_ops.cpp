#include "object_ops.h"

#include <cerrno>
#include <cstring>

#include "image_format.h"
#include "strata/frontend_client.h"

namespace strata::rbd {

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
    case ObjectMutation::Kind::kRemove:
      strata_write_op_remove(op);
      break;
  }
}

int mutate_object(const ObjectRef &obj, uint64_t snap_seq, const ObjectMutation &m) {
  const strata_client_api *strata_api = obj.api;
  const std::string oid = format::data_oid(obj.image_id, obj.objno);
  strata_write_op_t op = strata_write_op_new();
  if (!op) return -ENOMEM;
  if (snap_seq) strata_write_op_snap_context(op, snap_seq);  // first: preserves as it was
  // A zero or truncate must not create the object (a remove fails alone).
  if (m.kind == ObjectMutation::Kind::kZero || m.kind == ObjectMutation::Kind::kTruncate)
    strata_write_op_assert_exists(op);
  add_object_mutation(strata_api, op, m);
  const int rc = strata_write_op_operate(op, obj.io, oid.c_str(), nullptr);
  strata_write_op_release(op);
  return rc;
}

int read_object_at(const ObjectRef &obj, uint64_t snap_id, uint64_t off, uint64_t len,
                   char *out) {
  const strata_client_api *strata_api = obj.api;
  const std::string oid = format::data_oid(obj.image_id, obj.objno);
  strata_read_op_t op = strata_read_op_new();
  if (!op) return -ENOMEM;
  if (snap_id) strata_read_op_set_snap(op, snap_id);
  size_t got = 0;
  int read_rc = 0;
  strata_read_op_read(op, off, len, out, &got, &read_rc);
  const int rc = strata_read_op_operate(op, obj.io, oid.c_str(), nullptr);
  strata_read_op_release(op);
  if (rc < 0) return rc;
  if (got < len) std::memset(out + got, 0, len - got);
  return 0;
}

}  // namespace strata::rbd
