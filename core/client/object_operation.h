// ObjectOperation: the steps of one request on one object (guards, writes,
// reads), built by the C API or C++ callers and encoded into an OpRequest by
// the Objecter. Read steps carry a handler that receives the step's result
// while the reply is being processed.
//
// Data for write steps is either copied into the operation (the default; the
// caller's buffer may be reused at once) or borrowed (borrow_data(true): the
// caller guarantees the bytes outlive the request — the synchronous calls
// do, and save a copy of the payload that way).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::client {

// Mirrors wire::OpCode (msg/schema/wire.capnp); values are the wire's.
enum class StepCode : uint16_t {
  kRead = 0,
  kStat = 1,
  kWrite = 2,
  kWriteFull = 3,
  kAppend = 4,
  kTruncate = 5,
  kZero = 6,
  kRemove = 7,
  kCreate = 8,
  kSetXattr = 9,
  kRmXattr = 10,
  kGetXattr = 11,
  kGetXattrs = 12,
  kOmapSet = 13,
  kOmapRmKeys = 14,
  kOmapRmRange = 15,
  kOmapClear = 16,
  kOmapSetHeader = 17,
  kOmapGetHeader = 18,
  kOmapGetByKeys = 19,
  kOmapList = 20,
  kCmpXattr = 21,
  kAssertVersion = 22,
  kAssertExists = 23,
  kSnapContext = 24,
  kSnapTrim = 25,
  kSnapRollback = 26,
  kSetSnap = 27,
  kListSnaps = 28,
};

// Mirrors wire::CmpMode.
enum class CmpMode : uint8_t { kEq = 0, kNe = 1, kGt = 2, kGe = 3, kLt = 4, kLe = 5 };

const char *step_name(StepCode c);
bool step_is_write(StepCode c);

// What one step returned. The views point into the reply message and are
// valid only while the handler runs.
struct StepResult {
  int rc = 0;
  std::string_view data;
  std::vector<std::string_view> keys;
  std::vector<std::string_view> values;
  uint64_t size = 0;
  uint64_t mtime_ns = 0;
  bool more = false;
};

// Runs once per step when the request completes. `res.rc` is the step's own
// result; when the request failed before the step ran (or never reached an
// OSD) the handler gets the request's error and empty fields.
using StepHandler = std::function<void(const StepResult &res)>;

// Create flag (wire OsdOp.flags bit 0).
inline constexpr uint32_t kCreateExclusive = 1u << 0;

struct Step {
  StepCode code = StepCode::kRead;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string name;
  std::string name2;
  int32_t data_index = -1;  // into ObjectOperation::segments()
  std::vector<std::string> keys;
  std::vector<std::string> values;
  uint64_t version = 0;
  CmpMode cmp = CmpMode::kEq;
  uint32_t flags = 0;
  StepHandler handler;  // read steps; may be empty
};

class ObjectOperation {
 public:
  // A data segment: owned bytes, or a view of the caller's.
  class Segment {
   public:
    static Segment owned(std::string s) {
      Segment g;
      g.owned_ = std::move(s);
      g.is_owned_ = true;
      return g;
    }
    static Segment borrowed(std::string_view v) {
      Segment g;
      g.view_ = v;
      return g;
    }
    std::string_view view() const { return is_owned_ ? std::string_view(owned_) : view_; }

   private:
    std::string owned_;
    std::string_view view_;
    bool is_owned_ = false;
  };

  // Data added after this is borrowed (true) or copied (false, default).
  void borrow_data(bool borrow) { borrow_ = borrow; }

  // A request id the OSDs deduplicate this op's writes by, across client
  // instances (1..kMaxRequestId bytes, no NUL); see client.h.
  void set_request_id(std::string_view id);
  const std::string &request_id() const { return request_id_; }

  // Past the cluster's full ratio (up to the OSDs' failsafe ratio) this
  // write still goes through: for metadata whose changes free space (the
  // MDS's journal and directory objects), never for bulk data.
  void set_full_try(bool on = true) { full_try_ = on; }
  bool full_try() const { return full_try_; }

  // Guards: fail the whole request before anything is applied.
  void assert_exists();
  void assert_version(uint64_t version);
  void cmpxattr(std::string_view name, CmpMode mode, std::string_view value);

  // Writes.
  void create(bool exclusive);
  void write(uint64_t off, std::string_view data);
  void write_full(std::string_view data);
  void append(std::string_view data);
  void truncate(uint64_t size);
  void zero(uint64_t off, uint64_t len);
  void remove();
  void setxattr(std::string_view name, std::string_view value);
  void rmxattr(std::string_view name);
  void omap_set(std::vector<std::string> keys, std::vector<std::string> values);
  void omap_rm_keys(std::vector<std::string> keys);
  void omap_rm_range(std::string_view first, std::string_view end);
  void omap_clear();
  void omap_set_header(std::string_view data);
  // Object snapshots (client.h 1.3). snap_trim's ids travel as 8-byte
  // big-endian keys.
  void snap_context(uint64_t seq);
  void snap_trim(const std::vector<uint64_t> &keep);
  void snap_rollback(uint64_t snapid);

  // Reads; h receives the step's result. read: len 0 reads to the end.
  void read(uint64_t off, uint64_t len, StepHandler h);
  void stat(StepHandler h);
  void getxattr(std::string_view name, StepHandler h);
  void getxattrs(StepHandler h);
  void omap_get_keys(std::vector<std::string> keys, StepHandler h);
  // start_after/end empty: unbounded; max 0: 1000.
  void omap_list(std::string_view start_after, std::string_view end, uint32_t max, StepHandler h);
  void omap_get_header(StepHandler h);
  // Every step sees the object at snapshot snapid: a kSetSnap step kept
  // first, whenever it is called (0 removes it).
  void set_snap(uint64_t snapid);
  // Result: size = the snap set's seq; per clone a key (8-byte big-endian
  // id) and a value (8-byte big-endian size, then 1 byte: exists).
  void list_snaps(StepHandler h);

  const std::vector<Step> &steps() const { return steps_; }
  const std::vector<Segment> &segments() const { return segments_; }
  bool empty() const { return steps_.empty(); }
  size_t size() const { return steps_.size(); }
  bool is_write() const { return is_write_; }
  uint64_t data_bytes() const { return data_bytes_; }
  // The first argument error a builder call met (a step with a bad argument
  // is not added); OK when every step was accepted.
  const Status &error() const { return error_; }
  // Records an argument error found by a caller (e.g. a NULL pointer in the
  // C API); the first one sticks.
  void set_error(Status st) {
    if (error_.ok()) error_ = std::move(st);
  }

  // A copy whose data segments are views of this operation's: for running
  // an operation that outlives the request (a synchronous operate) without
  // copying its data again.
  ObjectOperation borrowing_copy() const;

  // Runs every step handler with `rc` and no data: the request failed as a
  // whole before (or without) results for its steps.
  void fail_handlers(int rc) const;

 private:
  Step &add(StepCode code);
  int32_t add_data(std::string_view data);
  bool check_name(std::string_view name, const char *what);
  bool check_data(size_t len);

  std::vector<Step> steps_;
  std::vector<Segment> segments_;
  uint64_t data_bytes_ = 0;
  uint64_t meta_bytes_ = 0;  // keys/values/names: they travel in the payload
  bool is_write_ = false;
  bool borrow_ = false;
  std::string request_id_;
  bool full_try_ = false;
  Status error_;
};

// Most data bytes one request may carry (STRATA_MAX_OP_DATA), and most bytes
// of keys, values and names (they travel in the Cap'n Proto payload, whose
// frames are limited to 4 MiB).
inline constexpr uint64_t kMaxOpData = 128ull << 20;
inline constexpr uint64_t kMaxOpMeta = 3ull << 20;
inline constexpr size_t kMaxXattrName = 255;
inline constexpr size_t kMaxRequestId = 128;

}  // namespace strata::client
