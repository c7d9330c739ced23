// The conformance kit as the behavioural suites see it.
//
// `strata-conformance` loads one plugin file with the host's own loader (so a
// plugin the host would refuse is refused here too), then runs the Catch2 test
// cases tagged with the plugin's kind ([backend] or [journal]). A suite file
// includes this header and talks to the plugin through it:
//
//   - what was loaded: descriptor(), plugin_path(), ops_size() and the
//     kind's vtable (backend_ops(), journal_ops(), placement_ops());
//   - where to put things: scratch_dir(), ScratchDir for a private subdir;
//   - how to open things: plugin_options() (validated against the plugin's
//     option specs, defaults filled, exactly as the host hands them over),
//     InstanceArgs, and the fresh-instance helpers FreshStore / FreshJournal /
//     FreshPlacement (over a CPlacementMap built from an sdk::PlacementMap);
//   - small C++ wrappers that make calling the C vtables pleasant:
//     TxnBuilder (strata_op arrays), read-to-string, list-to-vector.
//
// Error convention of the wrappers: a call the test expects to succeed
// throws CallFailed (Catch2 reports the message, which names the call, the
// errno and the plugin's strata_err text); a call whose failure is being
// tested has a `*_rc` variant that returns the raw negative errno.
//
// Threading: everything here may be used from the test's thread; FreshStore's
// read functions may also be used from several threads at once (they only
// call the plugin's thread-safe read functions). The kit's own state is
// created by main before Catch2 runs and is read-only afterwards.
//
// This API is shared by backend_*.cpp and journal_suite.cpp: extend it, do
// not change what is here.
#pragma once

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "printers.h"
#include "strata/cpp/placement.hpp"
#include "strata/journal.h"
#include "strata/objectstore.h"
#include "strata/placement.h"
#include "strata/plugin.h"
#include "txn_builder.h"

namespace strata::conformance {

// ---------------------------------------------------------------------------
// The plugin under test and the run's settings.

const strata_plugin_descriptor &descriptor();
// The file given with --plugin.
const std::string &plugin_path();
// The struct_size of the plugin's vtable; a field at or past it is absent
// (the plugin was built against an older ABI minor).
uint32_t ops_size();
// The vtable. Throws (failing the test) when the plugin is of the other kind,
// which happens only when a test of the other kind is named explicitly.
const strata_objectstore_ops &backend_ops();
const strata_journal_ops &journal_ops();
const strata_placement_ops &placement_ops();

// The --dir directory (or a temporary one the kit made and removes at exit).
const std::string &scratch_dir();
// Options as the host would pass them: every --option key=value checked
// against the plugin's option specs, then every declared default filled in.
// The strings live until the program exits.
const std::vector<strata_kv> &plugin_options();
// True when `value` is acceptable for the spec (the host's parsing rules of
// strata_option_type: INT with K/M/G/T suffix, BOOL words, ENUM members).
bool option_value_parses(const strata_option_spec &spec, std::string_view value);
// One option's value, or nullopt when the plugin declares no such option.
std::optional<std::string> option(std::string_view key);
// Host services handed to every instance: log lines go to stderr (WARN and
// up) and into a buffer that tests can inspect with log_lines().
const strata_host_services *host_services();
// Every line the plugin logged so far, oldest first, as "LEVEL: message".
// Pass the size of an earlier result to get only newer lines.
std::vector<std::string> log_lines(size_t from = 0);

// ---------------------------------------------------------------------------
// Errors.

// A plugin call that should have succeeded failed.
class CallFailed : public std::runtime_error {
 public:
  CallFailed(const std::string &call, int64_t code, const strata_err &err);
  int64_t code() const { return code_; }

 private:
  int64_t code_;
};

// errno_name(), describe_rc() and Errno, for checks of return codes that
// print by name: printers.h.

// ---------------------------------------------------------------------------
// Test data.

// n deterministic pseudo-random bytes (all 256 values occur); equal seeds
// give equal bytes, so expected contents need not be stored.
std::string pattern_bytes(size_t n, uint64_t seed);

// Comparing byte strings of megabytes: CHECK(same_bytes(got, want)) reports
// the sizes and the first differing offset instead of printing both strings.
struct ByteComparison {
  bool equal;
  std::string difference;  // "" when equal
  explicit operator bool() const { return equal; }
};
ByteComparison same_bytes(std::string_view got, std::string_view want);

// ---------------------------------------------------------------------------
// Places and arguments.

// A new directory under scratch_dir(), unique in this process run; removed
// with everything in it when the ScratchDir is destroyed.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view label = "t");
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// A strata_open_args for `path` carrying plugin_options() (with `overrides`
// replacing or adding keys) and host_services(). Owns what it points to.
class InstanceArgs {
 public:
  explicit InstanceArgs(std::string path,
                        std::vector<std::pair<std::string, std::string>> overrides = {});
  InstanceArgs(const InstanceArgs &) = delete;
  InstanceArgs &operator=(const InstanceArgs &) = delete;
  const strata_open_args *get() const { return &args_; }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
  std::deque<std::string> strings_;  // deque: element addresses stay put
  std::vector<strata_kv> options_;
  strata_open_args args_{};
};

// ---------------------------------------------------------------------------
// Object stores.

using KvList = std::vector<std::pair<std::string, std::string>>;
using NameList = std::vector<std::string>;

// A store of the plugin under test: mkfs + open in a fresh ScratchDir, closed
// and deleted when destroyed. Sequence numbers are assigned by apply(): the
// first transaction gets 1, each next one last_seq() + 1.
class FreshStore {
 public:
  explicit FreshStore(std::vector<std::pair<std::string, std::string>> option_overrides = {});
  ~FreshStore();
  FreshStore(const FreshStore &) = delete;
  FreshStore &operator=(const FreshStore &) = delete;

  const strata_objectstore_ops &ops() const { return backend_ops(); }
  strata_objectstore *handle() const { return os_; }
  const std::string &path() const { return args_.path(); }
  const strata_open_args *args() const { return args_.get(); }
  uint64_t caps() const;
  bool has_cap(uint64_t bit) const { return (caps() & bit) != 0; }

  // Closes without a checkpoint (what a crash leaves, minus torn writes).
  void close();
  // close() if open, then open the same path again. last_seq() is kept.
  void reopen();
  bool is_open() const { return os_ != nullptr; }

  // Applies with seq = last_seq() + 1 and returns that seq.
  uint64_t apply(const TxnBuilder &txn, uint32_t flags = 0);
  // Applies with an explicit seq (replay); last_seq() becomes max(last, seq).
  void apply_at(const TxnBuilder &txn, uint64_t seq, uint32_t flags = 0);
  int apply_rc(const TxnBuilder &txn, uint64_t seq, strata_err *err = nullptr);
  uint64_t last_seq() const { return last_seq_; }
  // checkpoint(last_seq()).
  void checkpoint();
  void checkpoint(uint64_t seq);
  uint64_t committed_seq();

  // Reads. Missing object or collection: CallFailed with -ENOENT; use the
  // _rc variants to test error codes.
  std::string read(std::string_view coll, std::string_view oid, uint64_t offset,
                   uint64_t length) const;
  // The whole object (stat, then read its size).
  std::string read_all(std::string_view coll, std::string_view oid) const;
  // Bytes read, or negative errno; the bytes go to *out when given.
  int64_t read_rc(std::string_view coll, std::string_view oid, uint64_t offset, uint64_t length,
                  std::string *out = nullptr) const;
  strata_object_stat stat(std::string_view coll, std::string_view oid) const;
  int stat_rc(std::string_view coll, std::string_view oid, strata_object_stat *out = nullptr) const;
  bool exists(std::string_view coll, std::string_view oid) const;
  uint64_t size(std::string_view coll, std::string_view oid) const;

  // nullopt when the xattr is absent (-ENODATA).
  std::optional<std::string> getxattr(std::string_view coll, std::string_view oid,
                                      std::string_view name) const;
  // The raw C call with the caller's buffer.
  int64_t getxattr_rc(std::string_view coll, std::string_view oid, std::string_view name, void *buf,
                      size_t cap) const;
  KvList getxattrs(std::string_view coll, std::string_view oid) const;
  int getxattrs_rc(std::string_view coll, std::string_view oid, KvList *out = nullptr) const;

  std::string omap_header(std::string_view coll, std::string_view oid) const;
  int64_t omap_header_rc(std::string_view coll, std::string_view oid, void *buf, size_t cap) const;
  std::optional<std::string> omap_get(std::string_view coll, std::string_view oid,
                                      std::string_view key) const;
  int64_t omap_get_rc(std::string_view coll, std::string_view oid, std::string_view key, void *buf,
                      size_t cap) const;
  KvList omap(std::string_view coll, std::string_view oid, std::string_view start_after = {},
              std::string_view end = {}, uint64_t limit = 0) const;
  int omap_rc(std::string_view coll, std::string_view oid, std::string_view start_after,
              std::string_view end, uint64_t limit, KvList *out = nullptr) const;

  NameList list_objects(std::string_view coll, std::string_view start_after = {},
                        uint64_t limit = 0) const;
  int list_objects_rc(std::string_view coll, std::string_view start_after, uint64_t limit,
                      NameList *out = nullptr) const;
  // Every object, fetched `page` names at a time with the last name as cursor.
  NameList list_all_objects(std::string_view coll, uint64_t page = 100) const;
  NameList list_collections() const;

  strata_store_usage usage() const;
  int64_t fsck() const;

  // ABI 1.1 staged writes: true when the vtable has them and the caps say so.
  bool staged_writes_supported() const;
  uint64_t stage_write(std::string_view data);
  void stage_release_unused();
  // ABI 1.2: true when the vtable has stage_release (and staged writes).
  bool stage_release_supported() const;
  // Returns the plugin's rc (0 or a negative errno) rather than throwing.
  int stage_release(uint64_t id);

  // Everything the read side shows, in one canonical printable text
  // (collections, objects, sizes, data digests, xattrs, omap, header), so
  // two states compare with ==.
  std::string dump() const;

 private:
  ScratchDir dir_;
  InstanceArgs args_;
  strata_objectstore *os_ = nullptr;
  uint64_t last_seq_ = 0;
};

// ---------------------------------------------------------------------------
// Journals.

// A journal of the plugin under test: create(capacity) + open at
// "<fresh ScratchDir>/journal" (the directory exists, the file does not);
// closed, destroyed and deleted when the object is destroyed.
class FreshJournal {
 public:
  explicit FreshJournal(uint64_t capacity = 0,
                        std::vector<std::pair<std::string, std::string>> option_overrides = {});
  ~FreshJournal();
  FreshJournal(const FreshJournal &) = delete;
  FreshJournal &operator=(const FreshJournal &) = delete;

  const strata_journal_ops &ops() const { return journal_ops(); }
  strata_journal *handle() const { return j_; }
  const std::string &path() const { return args_.path(); }
  const strata_open_args *args() const { return args_.get(); }
  uint64_t caps() const;

  // Waits for queued appends (the plugin's close does) and frees the handle.
  void close();
  // close() if open, then open the same path again (no create).
  void reopen();
  // close() if open, create(capacity) anew, open.
  void recreate(uint64_t capacity);
  bool is_open() const { return j_ != nullptr; }

  strata_journal_stat stat() const;

 private:
  void open();
  ScratchDir dir_;
  InstanceArgs args_;
  strata_journal *j_ = nullptr;
};

// ---------------------------------------------------------------------------
// Placement.

// Type ids of the maps test_cluster() builds.
constexpr uint32_t kTypeDevice = 0, kTypeHost = 1, kTypeRack = 2, kTypeRoot = 3;
// Rule ids of test_cluster(): replicas on distinct hosts, on distinct racks,
// and on any distinct devices.
constexpr uint32_t kRuleHosts = 0, kRuleRacks = 1, kRuleDevices = 2;
// Id of test_cluster()'s root bucket.
constexpr int32_t kRootBucket = -1;

// A map of `racks` racks of `hosts_per_rack` hosts of `devices_per_host`
// devices, every device of weight 1.0 and in, device ids 0.. in order
// (host h of rack r holds the devices of index (r * hosts + h) * devices + i),
// with the rules kRuleHosts, kRuleRacks and kRuleDevices. Change it freely:
// bucket weights are recomputed by with_weights_summed().
sdk::PlacementMap test_cluster(int racks, int hosts_per_rack, int devices_per_host);
// The map with every bucket's item weights set to the sum of its children.
sdk::PlacementMap with_weights_summed(sdk::PlacementMap map);
// The bucket that directly holds `item`, or 0 when none does.
int32_t parent_of(const sdk::PlacementMap &map, int32_t item);
// The ancestor of `item` of type `type` (item itself when of that type).
int32_t ancestor_of(const sdk::PlacementMap &map, int32_t item, uint32_t type);

// The C view of an sdk::PlacementMap, as the host hands it to create().
// Owns every array it points to. `extra_element_bytes` pads every element
// with that many bytes (of 0xA5) past the ABI 1.1 layout, as a host of a
// later minor would send them.
class CPlacementMap {
 public:
  explicit CPlacementMap(const sdk::PlacementMap &map, uint32_t extra_element_bytes = 0);
  CPlacementMap(const CPlacementMap &) = delete;
  CPlacementMap &operator=(const CPlacementMap &) = delete;
  strata_placement_map *get() { return &map_; }
  // Overwrites every array (and the names) with garbage: what create() was
  // given must not be read afterwards.
  void scribble();

 private:
  template <class T>
  const T *pack(const std::vector<T> &items, uint32_t *element_size);
  uint32_t extra_;
  std::deque<std::string> strings_;
  std::deque<std::vector<char>> arrays_;
  std::vector<const char *> class_names_;
  strata_placement_map map_{};
};

// The result of create(): rc, the handle (NULL on failure) and err.msg.
struct CreateResult {
  int rc;
  strata_placement *handle;
  std::string message;
};
CreateResult create_placement_rc(const strata_placement_map *map, const strata_host_services *host);

// The capability bits of a created instance.
uint64_t placement_caps(const strata_placement *p);

// A placement instance of the plugin under test over `map`, destroyed with
// the object. create() failing throws CallFailed.
class FreshPlacement {
 public:
  explicit FreshPlacement(const sdk::PlacementMap &map);
  explicit FreshPlacement(CPlacementMap &map);
  ~FreshPlacement();
  FreshPlacement(const FreshPlacement &) = delete;
  FreshPlacement &operator=(const FreshPlacement &) = delete;

  strata_placement *handle() const { return p_; }
  uint64_t caps() const { return placement_caps(p_); }
  // The devices of input x; CallFailed on a negative answer.
  std::vector<int32_t> map(uint32_t rule, uint32_t x, uint32_t num_rep) const;
  // The raw call into a buffer of `cap` elements: the count or -errno.
  int map_rc(uint32_t rule, uint32_t x, uint32_t num_rep, int32_t *out, uint32_t cap) const;

 private:
  void create(const strata_placement_map *map);
  strata_placement *p_ = nullptr;
};

}  // namespace strata::conformance

// How Catch2 prints a ByteComparison in a failed CHECK.
template <>
struct Catch::StringMaker<strata::conformance::ByteComparison> {
  static std::string convert(const strata::conformance::ByteComparison &c) { return c.difference; }
};
