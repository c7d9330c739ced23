// Read repair on the primary. A read its own copy cannot serve — the store
// answered EIO (a block checksum mismatch, a data file gone from under the
// OSD) or the data failed the object's digest — never reaches the client:
// the primary marks its copy missing, pulls the object from a replica with
// the recovery machinery (PgPull/PgPush), replaces its copy, and runs the
// read again. A replica whose copy fails as well is marked missing too, so
// that recovery pushes it the good copy afterwards. When no copy can be
// read the client gets EIO and the object is reported damaged (PG state
// `inconsistent`, HEALTH_ERR naming it) until a scrub or repair clears it.
#include "osd/encoding.h"
#include "osd/op_exec.h"
#include "osd/pg.h"

namespace strata::osd {

bool Pg::start_read_repair(const ClientOpRef &op, const std::string &why) {
  const std::string &oid = op->oid;
  const std::string me = "osd." + std::to_string(host_.whoami());
  if (op->read_repair_tried) return false;  // repaired once, and it failed again
  op->read_repair_tried = true;
  // Every copy failed the last time: not again for each read (a repair,
  // a clean deep scrub or a write clears the finding).
  if (auto d = damaged_.find(oid);
      d != damaged_.end() && d->second.rfind(kUnreadablePrefix, 0) == 0)
    return false;
  if (read_repairing_.count(oid) == 0) {
    if (pull_source(oid) < 0) {
      host_.log().error("osd", name_ + ": read of '" + oid + "' failed on " + me + " (" + why +
                                   ") and no replica can provide it");
      return false;
    }
    host_.log().warn("osd", name_ + ": read of '" + oid + "' failed on " + me + " (" + why +
                                "); repairing it from a replica");
    auto state = load_object_state(host_.store(), coll_, oid);
    MissingItem mi{state.ok() && state->exists ? state->oi.version : info_.last_update, false};
    missing_[oid] = mi;
    read_repairing_[oid];
  }
  slot(oid).waiters.push_back([this, op] { do_op(op, true); });
  if (!recovering_.count(oid)) start_object_recovery(oid, true);
  publish();
  return true;
}

void Pg::read_repair_pull_failed(const std::string &oid, int32_t from, int32_t rc) {
  auto it = read_repairing_.find(oid);
  if (it == read_repairing_.end()) return;
  // The caller marked `from` missing the object (so that the next pull
  // asks another copy); remember it to undo that if every copy is bad.
  it->second.insert(from);
  if (pull_source(oid) >= 0) return;
  std::string who;
  for (int32_t o : it->second) who += ", osd." + std::to_string(o);
  std::string why = std::string(kUnreadablePrefix) + "every copy failed (osd." +
                    std::to_string(host_.whoami()) + who + "; last error rc " + std::to_string(rc) +
                    ")";
  host_.log().error("osd", name_ + ": '" + oid + "' is " + why);
  // Nothing to copy from: the copies stay as they are (a later write or
  // an operator's repair may fix them), reads get EIO, health names it.
  for (int32_t o : it->second) {
    if (auto pit = peers_.find(o); pit != peers_.end()) pit->second.missing.erase(oid);
    if (auto rit = reports_.find(o); rit != reports_.end()) rit->second.missing.erase(oid);
  }
  missing_.erase(oid);
  read_repairing_.erase(it);
  store::Transaction t;
  set_damaged(t, oid, why);
  queue_local(std::move(t));
}

void Pg::read_repair_done(const std::string &oid, int32_t from) {
  auto it = read_repairing_.find(oid);
  if (it == read_repairing_.end()) return;
  read_repairing_.erase(it);
  ++read_repairs_;
  host_.log().info("osd", name_ + ": repaired '" + oid + "' on osd." +
                              std::to_string(host_.whoami()) + " with the copy of osd." +
                              std::to_string(from));
}

void Pg::set_damaged(store::Transaction &t, const std::string &oid, const std::string &why) {
  damaged_[oid] = why;
  ensure_local(t);
  t.omap_set(coll_, kPgMetaObject, std::string(kDamagedKeyPrefix) + oid, why);
}

void Pg::clear_damaged(store::Transaction &t, const std::string &oid) {
  if (!damaged_.erase(oid)) return;
  t.omap_rm(coll_, kPgMetaObject, std::string(kDamagedKeyPrefix) + oid);
}

}  // namespace strata::osd
