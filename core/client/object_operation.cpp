#include "client/object_operation.h"

namespace strata::client {

const char *step_name(StepCode c) {
  switch (c) {
    case StepCode::kRead: return "read";
    case StepCode::kStat: return "stat";
    case StepCode::kWrite: return "write";
    case StepCode::kWriteFull: return "write_full";
    case StepCode::kAppend: return "append";
    case StepCode::kTruncate: return "truncate";
    case StepCode::kZero: return "zero";
    case StepCode::kRemove: return "remove";
    case StepCode::kCreate: return "create";
    case StepCode::kSetXattr: return "setxattr";
    case StepCode::kRmXattr: return "rmxattr";
    case StepCode::kGetXattr: return "getxattr";
    case StepCode::kGetXattrs: return "getxattrs";
    case StepCode::kOmapSet: return "omap_set";
    case StepCode::kOmapRmKeys: return "omap_rm_keys";
    case StepCode::kOmapRmRange: return "omap_rm_range";
    case StepCode::kOmapClear: return "omap_clear";
    case StepCode::kOmapSetHeader: return "omap_set_header";
    case StepCode::kOmapGetHeader: return "omap_get_header";
    case StepCode::kOmapGetByKeys: return "omap_get_keys";
    case StepCode::kOmapList: return "omap_list";
    case StepCode::kCmpXattr: return "cmpxattr";
    case StepCode::kAssertVersion: return "assert_version";
    case StepCode::kAssertExists: return "assert_exists";
    case StepCode::kSnapContext: return "snap_context";
    case StepCode::kSnapTrim: return "snap_trim";
    case StepCode::kSnapRollback: return "snap_rollback";
    case StepCode::kSetSnap: return "set_snap";
    case StepCode::kListSnaps: return "list_snaps";
  }
  return "unknown";
}

bool step_is_write(StepCode c) {
  switch (c) {
    case StepCode::kWrite:
    case StepCode::kWriteFull:
    case StepCode::kAppend:
    case StepCode::kTruncate:
    case StepCode::kZero:
    case StepCode::kRemove:
    case StepCode::kCreate:
    case StepCode::kSetXattr:
    case StepCode::kRmXattr:
    case StepCode::kOmapSet:
    case StepCode::kOmapRmKeys:
    case StepCode::kOmapRmRange:
    case StepCode::kOmapClear:
    case StepCode::kOmapSetHeader:
    case StepCode::kSnapContext:
    case StepCode::kSnapTrim:
    case StepCode::kSnapRollback:
      return true;
    default:
      return false;
  }
}

Step &ObjectOperation::add(StepCode code) {
  if (step_is_write(code)) is_write_ = true;
  steps_.emplace_back();
  steps_.back().code = code;
  return steps_.back();
}

bool ObjectOperation::check_name(std::string_view name, const char *what) {
  if (name.empty() || name.size() > kMaxXattrName || name.find('\0') != std::string_view::npos) {
    if (error_.ok())
      error_ = Status::Error(EINVAL, std::string(what) + ": an xattr name must be 1.." +
                                         std::to_string(kMaxXattrName) + " bytes without NUL");
    return false;
  }
  meta_bytes_ += name.size();
  return true;
}

bool ObjectOperation::check_data(size_t len) {
  if (data_bytes_ + len > kMaxOpData) {
    if (error_.ok())
      error_ = Status::Error(E2BIG, "operation carries more than " +
                                        std::to_string(kMaxOpData >> 20) + " MiB of data");
    return false;
  }
  return true;
}

int32_t ObjectOperation::add_data(std::string_view data) {
  data_bytes_ += data.size();
  segments_.push_back(borrow_ ? Segment::borrowed(data) : Segment::owned(std::string(data)));
  return static_cast<int32_t>(segments_.size() - 1);
}

void ObjectOperation::assert_exists() { add(StepCode::kAssertExists); }

void ObjectOperation::set_request_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestId || id.find('\0') != std::string_view::npos) {
    set_error(Status::Error(EINVAL, "request id must be 1.." + std::to_string(kMaxRequestId) +
                                        " bytes without NUL"));
    return;
  }
  request_id_ = std::string(id);
}

void ObjectOperation::assert_version(uint64_t version) {
  add(StepCode::kAssertVersion).version = version;
}

void ObjectOperation::cmpxattr(std::string_view name, CmpMode mode, std::string_view value) {
  if (!check_name(name, "cmpxattr") || !check_data(value.size())) return;
  int32_t seg = add_data(value);
  Step &s = add(StepCode::kCmpXattr);
  s.name = name;
  s.cmp = mode;
  s.data_index = seg;
}

void ObjectOperation::create(bool exclusive) {
  add(StepCode::kCreate).flags = exclusive ? kCreateExclusive : 0;
}

void ObjectOperation::write(uint64_t off, std::string_view data) {
  if (!check_data(data.size())) return;
  int32_t seg = add_data(data);
  Step &s = add(StepCode::kWrite);
  s.offset = off;
  s.length = data.size();
  s.data_index = seg;
}

void ObjectOperation::write_full(std::string_view data) {
  if (!check_data(data.size())) return;
  int32_t seg = add_data(data);
  Step &s = add(StepCode::kWriteFull);
  s.length = data.size();
  s.data_index = seg;
}

void ObjectOperation::append(std::string_view data) {
  if (!check_data(data.size())) return;
  int32_t seg = add_data(data);
  Step &s = add(StepCode::kAppend);
  s.length = data.size();
  s.data_index = seg;
}

void ObjectOperation::truncate(uint64_t size) { add(StepCode::kTruncate).offset = size; }

void ObjectOperation::zero(uint64_t off, uint64_t len) {
  Step &s = add(StepCode::kZero);
  s.offset = off;
  s.length = len;
}

void ObjectOperation::remove() { add(StepCode::kRemove); }

void ObjectOperation::setxattr(std::string_view name, std::string_view value) {
  if (!check_name(name, "setxattr") || !check_data(value.size())) return;
  int32_t seg = add_data(value);
  Step &s = add(StepCode::kSetXattr);
  s.name = name;
  s.data_index = seg;
}

void ObjectOperation::rmxattr(std::string_view name) {
  if (!check_name(name, "rmxattr")) return;
  add(StepCode::kRmXattr).name = name;
}

void ObjectOperation::omap_set(std::vector<std::string> keys, std::vector<std::string> values) {
  if (keys.size() != values.size()) {
    if (error_.ok()) error_ = Status::Error(EINVAL, "omap_set: keys and values differ in count");
    return;
  }
  uint64_t bytes = 0;
  for (size_t i = 0; i < keys.size(); ++i) bytes += keys[i].size() + values[i].size() + 16;
  if (meta_bytes_ + bytes > kMaxOpMeta) {
    if (error_.ok())
      error_ = Status::Error(E2BIG, "omap_set: keys and values exceed " +
                                        std::to_string(kMaxOpMeta >> 20) + " MiB in one operation");
    return;
  }
  meta_bytes_ += bytes;
  Step &s = add(StepCode::kOmapSet);
  s.keys = std::move(keys);
  s.values = std::move(values);
}

void ObjectOperation::omap_rm_keys(std::vector<std::string> keys) {
  uint64_t bytes = 0;
  for (const std::string &k : keys) bytes += k.size() + 8;
  if (meta_bytes_ + bytes > kMaxOpMeta) {
    if (error_.ok()) error_ = Status::Error(E2BIG, "omap_rm_keys: too many key bytes");
    return;
  }
  meta_bytes_ += bytes;
  add(StepCode::kOmapRmKeys).keys = std::move(keys);
}

void ObjectOperation::omap_rm_range(std::string_view first, std::string_view end) {
  Step &s = add(StepCode::kOmapRmRange);
  s.name = first;
  s.name2 = end;
}

void ObjectOperation::omap_clear() { add(StepCode::kOmapClear); }

void ObjectOperation::omap_set_header(std::string_view data) {
  if (!check_data(data.size())) return;
  int32_t seg = add_data(data);
  Step &s = add(StepCode::kOmapSetHeader);
  s.length = data.size();
  s.data_index = seg;
}

void ObjectOperation::snap_context(uint64_t seq) { add(StepCode::kSnapContext).version = seq; }

void ObjectOperation::snap_trim(const std::vector<uint64_t> &keep) {
  if (meta_bytes_ + keep.size() * 16 > kMaxOpMeta) {
    set_error(Status::Error(E2BIG, "snap_trim: too many snapshot ids"));
    return;
  }
  meta_bytes_ += keep.size() * 16;
  Step &s = add(StepCode::kSnapTrim);
  s.keys.reserve(keep.size());
  for (uint64_t id : keep) {
    std::string k(8, '\0');
    for (int i = 0; i < 8; ++i) k[i] = static_cast<char>(id >> (56 - 8 * i));
    s.keys.push_back(std::move(k));
  }
}

void ObjectOperation::snap_rollback(uint64_t snapid) {
  if (snapid == 0) {
    set_error(Status::Error(EINVAL, "snap_rollback: snapshot id 0"));
    return;
  }
  add(StepCode::kSnapRollback).version = snapid;
}

void ObjectOperation::set_snap(uint64_t snapid) {
  if (!steps_.empty() && steps_.front().code == StepCode::kSetSnap) steps_.erase(steps_.begin());
  if (snapid == 0) return;
  Step s;
  s.code = StepCode::kSetSnap;
  s.version = snapid;
  steps_.insert(steps_.begin(), std::move(s));
}

void ObjectOperation::list_snaps(StepHandler h) { add(StepCode::kListSnaps).handler = std::move(h); }

void ObjectOperation::read(uint64_t off, uint64_t len, StepHandler h) {
  if (len > kMaxOpData) {
    if (error_.ok()) error_ = Status::Error(E2BIG, "read of more than 128 MiB in one operation");
    return;
  }
  Step &s = add(StepCode::kRead);
  s.offset = off;
  s.length = len;
  s.handler = std::move(h);
}

void ObjectOperation::stat(StepHandler h) { add(StepCode::kStat).handler = std::move(h); }

void ObjectOperation::getxattr(std::string_view name, StepHandler h) {
  if (!check_name(name, "getxattr")) return;
  Step &s = add(StepCode::kGetXattr);
  s.name = name;
  s.handler = std::move(h);
}

void ObjectOperation::getxattrs(StepHandler h) {
  add(StepCode::kGetXattrs).handler = std::move(h);
}

void ObjectOperation::omap_get_keys(std::vector<std::string> keys, StepHandler h) {
  uint64_t bytes = 0;
  for (const std::string &k : keys) bytes += k.size() + 8;
  if (meta_bytes_ + bytes > kMaxOpMeta) {
    if (error_.ok()) error_ = Status::Error(E2BIG, "omap_get_keys: too many key bytes");
    return;
  }
  meta_bytes_ += bytes;
  Step &s = add(StepCode::kOmapGetByKeys);
  s.keys = std::move(keys);
  s.handler = std::move(h);
}

void ObjectOperation::omap_list(std::string_view start_after, std::string_view end, uint32_t max,
                                StepHandler h) {
  Step &s = add(StepCode::kOmapList);
  s.name = start_after;
  s.name2 = end;
  s.length = max == 0 ? 1000 : max;
  s.handler = std::move(h);
}

void ObjectOperation::omap_get_header(StepHandler h) {
  add(StepCode::kOmapGetHeader).handler = std::move(h);
}

ObjectOperation ObjectOperation::borrowing_copy() const {
  ObjectOperation c;
  c.steps_ = steps_;
  c.segments_.reserve(segments_.size());
  for (const Segment &s : segments_) c.segments_.push_back(Segment::borrowed(s.view()));
  c.data_bytes_ = data_bytes_;
  c.meta_bytes_ = meta_bytes_;
  c.is_write_ = is_write_;
  c.request_id_ = request_id_;
  c.full_try_ = full_try_;
  c.borrow_ = true;
  c.error_ = error_;
  return c;
}

void ObjectOperation::fail_handlers(int rc) const {
  StepResult r;
  r.rc = rc;
  for (const Step &s : steps_)
    if (s.handler) s.handler(r);
}

}  // namespace strata::client
