#include "store_model.h"

#include <algorithm>
#include <set>

namespace strata::testing {

namespace {

std::string str(strata_slice s) { return std::string(s.data ? s.data : "", s.len); }

}  // namespace

uint64_t StoreState::data_bytes() const {
  uint64_t n = 0;
  for (const auto &[c, objs] : collections)
    for (const auto &[o, obj] : objs) n += obj.data.size();
  return n;
}

uint64_t StoreState::object_count() const {
  uint64_t n = 0;
  for (const auto &[c, objs] : collections) n += objs.size();
  return n;
}

Status Model::validate(const StoreState &s, const store::Transaction &t) {
  std::map<std::string, bool> delta;  // collection -> exists, after earlier ops of t
  auto exists = [&](const std::string &c) {
    auto it = delta.find(c);
    if (it != delta.end()) return it->second;
    return s.collections.count(c) > 0;
  };
  for (const strata_op &op : t.ops()) {
    std::string c = str(op.collection);
    if (c.empty()) return Status::Error(EINVAL, "model: empty collection name");
    switch (op.type) {
      case STRATA_OP_MKCOLL:
        delta[c] = true;
        continue;
      case STRATA_OP_RMCOLL:
        if (!exists(c)) return Status::Error(ENOENT, "model: rmcoll of missing " + c);
        delta[c] = false;
        continue;
      case STRATA_OP_TOUCH:
      case STRATA_OP_WRITE:
      case STRATA_OP_WRITE_FULL:
      case STRATA_OP_TRUNCATE:
      case STRATA_OP_ZERO:
      case STRATA_OP_REMOVE:
      case STRATA_OP_SETXATTR:
      case STRATA_OP_RMXATTR:
      case STRATA_OP_OMAP_SET:
      case STRATA_OP_OMAP_RM:
      case STRATA_OP_OMAP_CLEAR:
      case STRATA_OP_OMAP_SET_HEADER:
      case STRATA_OP_OMAP_RM_RANGE:
      case store::kOpAppend:
        break;
      case STRATA_OP_CLONE:
        if (op.value.len == 0 || str(op.value) == str(op.object))
          return Status::Error(EINVAL, "model: clone needs a different destination");
        break;
      default:
        return Status::Error(EINVAL,
                             "model: op type " + std::to_string(op.type) + " is not modelled");
    }
    if (!exists(c)) return Status::Error(ENOENT, "model: collection '" + c + "' does not exist");
    if (op.object.len == 0) return Status::Error(EINVAL, "model: empty object name");
  }
  return Status::OK();
}

Status Model::apply(const store::Transaction &t) {
  if (t.empty()) return Status::Error(EINVAL, "model: empty transaction");
  Status st = validate(state_, t);
  if (!st.ok()) return st;
  for (const strata_op &op : t.ops()) apply_op(op);
  return Status::OK();
}

void Model::apply_op(const strata_op &op) {
  const std::string c = str(op.collection);
  if (op.type == STRATA_OP_MKCOLL) {
    state_.collections[c];  // no-op if it exists
    return;
  }
  if (op.type == STRATA_OP_RMCOLL) {
    state_.collections.erase(c);
    return;
  }
  CollectionState &coll = state_.collections[c];
  const std::string o = str(op.object);
  auto it = coll.find(o);
  const bool missing = it == coll.end();

  // Ops that do nothing to a missing object.
  switch (op.type) {
    case STRATA_OP_REMOVE:
      if (!missing) coll.erase(it);
      return;
    case STRATA_OP_RMXATTR:
      if (!missing) it->second.xattrs.erase(str(op.key));
      return;
    case STRATA_OP_OMAP_RM:
      if (!missing) it->second.omap.erase(str(op.key));
      return;
    case STRATA_OP_OMAP_CLEAR:
      if (!missing) it->second.omap.clear();
      return;
    case STRATA_OP_OMAP_RM_RANGE:
      if (!missing) {
        auto &m = it->second.omap;
        std::string first = str(op.key), end = str(op.value);
        auto lo = m.lower_bound(first);
        auto hi = end.empty() ? m.end() : m.lower_bound(end);
        if (end.empty() || first < end) m.erase(lo, hi);
      }
      return;
    default:
      break;
  }

  ObjectState &obj = coll[o];  // creates it
  std::string &d = obj.data;
  switch (op.type) {
    case STRATA_OP_TOUCH:
      break;
    case store::kOpAppend:
      d.append(op.value.data ? op.value.data : "", op.value.len);
      break;
    case STRATA_OP_WRITE: {
      uint64_t end = op.offset + op.value.len;
      if (d.size() < end) d.resize(end, '\0');
      if (op.value.len) std::copy_n(op.value.data, op.value.len, d.begin() + op.offset);
      break;
    }
    case STRATA_OP_WRITE_FULL:
      d = str(op.value);
      break;
    case STRATA_OP_TRUNCATE:
      d.resize(op.offset, '\0');
      break;
    case STRATA_OP_ZERO:
      if (op.offset < d.size()) {
        uint64_t end = std::min<uint64_t>(d.size(), op.offset + op.length);
        std::fill(d.begin() + op.offset, d.begin() + end, '\0');
      }
      break;
    case STRATA_OP_SETXATTR:
      obj.xattrs[str(op.key)] = str(op.value);
      break;
    case STRATA_OP_OMAP_SET:
      obj.omap[str(op.key)] = str(op.value);
      break;
    case STRATA_OP_OMAP_SET_HEADER:
      obj.header = str(op.value);
      break;
    case STRATA_OP_CLONE: {
      ObjectState copy = obj;  // the source (created if it was missing)
      coll[str(op.value)] = std::move(copy);
      break;
    }
    default:
      break;
  }
}

}  // namespace strata::testing
