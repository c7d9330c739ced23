// An ABI 1.3 backend written with the SDK's C++ helpers and no options (the
// plugin macro is given none): it stores nothing, and reports what its last
// apply() saw through a vendor control op, so that the tests can check how
// the host lays out a transaction's ops.
#include <memory>
#include <vector>

#include "strata/cpp/objectstore.hpp"

namespace {

using strata::sdk::Error;

// arg: uint64_t[1 + kMaxOps]: the op count of the last apply, then their types.
constexpr int kCtlLastApply = STRATA_CTL_VENDOR_MIN + 1;
constexpr size_t kMaxOps = 8;

class ProbeStore : public strata::sdk::ObjectStore {
 public:
  static void mkfs(const strata::sdk::OpenArgs &) {}
  static std::unique_ptr<ProbeStore> open(const strata::sdk::OpenArgs &) {
    return std::make_unique<ProbeStore>();
  }

  uint64_t capabilities() const override { return 0; }
  void apply(const strata_txn &txn) override {
    types_.clear();
    for (const strata_op &op : strata::sdk::ops_of(txn)) types_.push_back(op.type);
  }
  void checkpoint(uint64_t) override {}
  uint64_t committed_seq() override { return 0; }
  uint64_t read(std::string_view, std::string_view, uint64_t, uint64_t, void *) override {
    throw Error(ENOENT, "probe stores nothing");
  }
  strata_object_stat stat(std::string_view, std::string_view) override {
    throw Error(ENOENT, "probe stores nothing");
  }
  bool getxattr(std::string_view, std::string_view, std::string_view, std::string &) override {
    return false;
  }
  void getxattrs(std::string_view, std::string_view, const strata::sdk::KvVisitor &) override {}
  std::string omap_get_header(std::string_view, std::string_view) override { return {}; }
  bool omap_get(std::string_view, std::string_view, std::string_view, std::string &) override {
    return false;
  }
  void omap_iterate(std::string_view, std::string_view, std::string_view, std::string_view,
                    uint64_t, const strata::sdk::KvVisitor &) override {}
  void list_objects(std::string_view, std::string_view, uint64_t,
                    const strata::sdk::NameVisitor &) override {}
  // Three fixed names, so that a visitor can stop part way.
  void list_collections(const strata::sdk::NameVisitor &v) override {
    for (const char *name : {"x", "y", "z"})
      if (!v(name)) return;
  }
  strata_store_usage usage() override { return {}; }

  int control(int op, void *arg) override {
    if (op != kCtlLastApply) return ObjectStore::control(op, arg);
    auto *out = static_cast<uint64_t *>(arg);
    out[0] = types_.size();
    for (size_t i = 0; i < types_.size() && i < kMaxOps; ++i) out[1 + i] = types_[i];
    return 0;
  }

 private:
  std::vector<uint32_t> types_;
};

}  // namespace

STRATA_OBJECTSTORE_PLUGIN(ProbeStore, "cpp_probe", "0.0.1",
                          "a C++ backend without options that reports what apply() saw")
