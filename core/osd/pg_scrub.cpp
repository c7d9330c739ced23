// Scrub and repair (`strata pg scrub|repair`): the primary walks the PG in
// chunks of objects; for each chunk it holds writes back, asks every
// acting replica for its objects' versions and sizes (deep: a digest of
// data, xattrs and omap), compares them with its own and records the
// copies that disagree with the majority. Repair marks the bad copies
// missing and lets recovery copy the good one over them.
#include <algorithm>
#include <cstdio>

#include "common/json.h"
#include "osd/pg.h"
#include "osd/pg_msgs.h"
#include "osd/pg_scrub.h"

namespace strata::osd {

namespace {

constexpr size_t kScrubChunk = 32;

std::string json_str(const std::string &s) { return json::quote(s); }

msg::Message command_reply(uint64_t tid, int32_t rc, const std::string &message,
                           const std::string &json, uint64_t retry_epoch = 0) {
  return build_msg<wire::PgCommandReply>(msg::kMsgPgCommandReply, [&](wire::PgCommandReply::Builder b) {
    b.setTid(tid);
    b.setRc(rc);
    b.setMessage(message);
    b.setJson(json);
    b.setRetryEpoch(retry_epoch);
  });
}

}  // namespace

bool Pg::any_backfill() const {
  for (const auto &[osd, ps] : peers_)
    if (ps.backfill) return true;
  return false;
}

void Pg::on_pg_command(const InMsgRef &in) {
  auto c = in->root<wire::PgCommand>();
  uint64_t tid = c.getTid();
  if (!is_primary()) {
    send_reply(in->conn, command_reply(tid, 0, "", "", map_ ? map_->epoch() : 0));
    return;
  }
  if (state_ != State::kActive) {
    waiting_active_.push_back([this, in] { on_pg_command(in); });
    return;
  }
  if (scrub_) {
    send_reply(in->conn, command_reply(tid, -EBUSY, name_ + ": a scrub is already running", ""));
    return;
  }
  if (!is_clean()) {
    send_reply(in->conn, command_reply(tid, -EAGAIN,
                                       name_ + " is " + state_string() +
                                           ": scrub needs active+clean (try again after recovery)",
                                       ""));
    return;
  }
  scrub_ = std::make_unique<Scrub>();
  scrub_->deep = c.getDeep() || c.getRepair();
  scrub_->repair = c.getRepair();
  scrub_->conn = in->conn;
  scrub_->tid = tid;
  host_.log().info("osd", name_ + ": " + (scrub_->repair ? "repair" : scrub_->deep ? "deep scrub" : "scrub") +
                              " started");
  publish();
  scrub_step();
}

bool Pg::scrub_blocks(const std::string &oid) const {
  if (!scrub_ || !scrub_->chunk_active) return false;
  return oid > scrub_->cursor && (scrub_->chunk_to_end || oid <= scrub_->chunk_end);
}

bool Pg::scrub_tid_matches(uint64_t tid) const {
  return scrub_ && scrub_->requests_sent && scrub_->scan_tid == tid;
}

void Pg::scrub_step() {
  if (!scrub_ || scrub_->repairing) return;
  Scrub &s = *scrub_;
  if (!s.chunk_active) {
    bool more = false;
    std::vector<std::string> names = list_range(s.cursor, "", kScrubChunk, &more);
    s.chunk_to_end = !more;
    s.chunk_end = more ? names.back() : std::string();
    s.chunk_active = true;
    s.requests_sent = false;
  }
  if (s.requests_sent) return;
  // Writes already on their way into the chunk finish first.
  for (const auto &[tid, w] : in_flight_)
    if (scrub_blocks(w->oid)) return;
  s.requests_sent = true;
  s.scan_tid = next_tid_++;
  s.replies.clear();
  s.waiting.clear();
  int32_t me = host_.whoami();
  for (int32_t r : acting_) {
    if (r == me) continue;
    s.waiting.insert(r);
    host_.send_to_osd(r, build_msg<wire::PgScan>(msg::kMsgPgScan, [&](wire::PgScan::Builder b) {
                        stamp(b);
                        b.setTid(s.scan_tid);
                        b.setFrom(me);
                        b.setStartAfter(s.cursor);
                        b.setEnd(s.chunk_end);
                        b.setLimit(0);
                        b.setDeep(s.deep);
                      }));
  }
  bool more = false;
  s.replies[me] = scan_items(s.cursor, s.chunk_end, 0, s.deep, &more);
  if (s.waiting.empty()) scrub_compare();
}

void Pg::scrub_reply(int32_t from, std::vector<ScanItemT> items) {
  Scrub &s = *scrub_;
  if (!s.waiting.erase(from)) return;
  s.replies[from] = std::move(items);
  if (s.waiting.empty()) scrub_compare();
}

void Pg::scrub_compare() {
  Scrub &s = *scrub_;
  int32_t me = host_.whoami();
  // oid -> osd -> item
  std::map<std::string, std::map<int32_t, const ScanItemT *>> objs;
  for (const auto &[osd, items] : s.replies)
    for (const ScanItemT &it : items) objs[it.oid][osd] = &it;
  for (const auto &[oid, copies] : objs) {
    s.objects++;
    // What each copy looks like, as a comparable key.
    std::map<int32_t, std::string> key;
    for (int32_t osd : acting_) {
      auto it = copies.find(osd);
      if (it == copies.end()) key[osd] = "absent";
      else if (it->second->rc != 0) key[osd] = "error " + std::to_string(it->second->rc);
      else if (s.deep)
        key[osd] = "d" + std::to_string(it->second->digest) + "/" + std::to_string(it->second->size);
      else
        key[osd] = "v" + it->second->version.str() + "/" + std::to_string(it->second->size);
    }
    std::map<std::string, int> votes;
    for (const auto &[osd, k] : key)
      if (k.rfind("error", 0) != 0) votes[k]++;
    if (votes.size() == 1 && votes.begin()->second == static_cast<int>(key.size())) continue;
    // The majority wins; on a tie, the primary's copy (unless unreadable).
    std::string good;
    int best = 0;
    for (const auto &[k, n] : votes) {
      if (n > best || (n == best && key[me] == k)) {
        best = n;
        good = k;
      }
    }
    Scrub::Bad b;
    b.oid = oid;
    for (const auto &[osd, k] : key) {
      if (k == good) {
        if (b.good < 0 || osd == me) b.good = osd;
      } else {
        b.bad.push_back(osd);
      }
    }
    const std::string &bk = key[b.bad.front()];
    if (good.empty()) b.why = "no readable copy";
    else if (bk == "absent") b.why = "missing";
    else if (bk == "error " + std::to_string(-EBADMSG)) b.why = "digest mismatch";  // vs its object info
    else if (bk == "error " + std::to_string(-EIO))
      b.why = "unreadable (EIO: a block checksum mismatch or missing data)";
    else if (bk.rfind("error", 0) == 0) b.why = "read " + bk;
    else if (good == "absent") b.why = "should not exist";
    else b.why = s.deep ? "digest mismatch" : "version or size mismatch";
    std::string who;
    for (int32_t o : b.bad) who += (who.empty() ? "osd." : ", osd.") + std::to_string(o);
    host_.log().warn("osd", name_ + ": scrub: '" + oid + "' inconsistent on " + who + ": " + b.why);
    s.inconsistent.push_back(std::move(b));
  }
  s.chunk_active = false;
  s.requests_sent = false;
  bool done = s.chunk_to_end;
  if (!done) s.cursor = s.chunk_end;
  run_waiting(s.waiters);
  if (!scrub_) return;
  if (!done) {
    scrub_step();
    return;
  }
  if (!s.repair || s.inconsistent.empty()) {
    finish_scrub(0, "");
    return;
  }
  // Repair: the bad copies become missing; recovery replaces them with the
  // good one (pulled first if the primary's own copy is the bad one).
  s.repairing = true;
  for (const Scrub::Bad &b : s.inconsistent) {
    if (b.good < 0) continue;  // nothing good to copy
    MissingItem mi{info_.last_update, false};
    // An object the good copy does not have must go.
    bool good_absent = true;
    for (const auto &[osd, items] : s.replies)
      if (osd == b.good)
        for (const ScanItemT &it : items)
          if (it.oid == b.oid) {
            good_absent = false;
            mi.need = it.version;
          }
    mi.is_delete = good_absent;
    for (int32_t o : b.bad) {
      if (o == me) missing_[b.oid] = mi;
      else if (auto pit = peers_.find(o); pit != peers_.end()) pit->second.missing[b.oid] = mi;
    }
    s.to_repair.insert(b.oid);
  }
  recover();
  if (scrub_ && scrub_->to_repair.empty()) finish_scrub(0, "");
}

void Pg::scrub_repaired(const std::string &oid) {
  Scrub &s = *scrub_;
  if (!s.repairing || !s.to_repair.count(oid)) return;
  if (degraded(oid) || recovering_.count(oid)) return;  // more copies to fix
  s.to_repair.erase(oid);
  s.repaired++;
  if (s.to_repair.empty()) finish_scrub(0, "");
}

void Pg::finish_scrub(int32_t rc, const std::string &why) {
  std::unique_ptr<Scrub> sp = std::move(scrub_);
  Scrub &s = *sp;
  std::string kind = s.repair ? "repair" : s.deep ? "deep-scrub" : "scrub";
  std::string json = "{\"pg\":" + json_str(pg_str(pgid_)) + ",\"deep\":" + (s.deep ? "true" : "false") +
                     ",\"repair\":" + (s.repair ? "true" : "false") +
                     ",\"objects\":" + std::to_string(s.objects) + ",\"inconsistent\":[";
  for (size_t i = 0; i < s.inconsistent.size(); ++i) {
    const Scrub::Bad &b = s.inconsistent[i];
    json += (i ? "," : "") + std::string("{\"oid\":") + json_str(b.oid) + ",\"bad_osds\":[";
    for (size_t j = 0; j < b.bad.size(); ++j) json += (j ? "," : "") + std::to_string(b.bad[j]);
    json += "],\"good_osd\":" + std::to_string(b.good) + ",\"reason\":" + json_str(b.why) + "}";
  }
  json += "],\"repaired\":" + std::to_string(s.repaired) + "}";
  std::string message;
  if (rc < 0) {
    message = name_ + " " + kind + " failed: " + why;
  } else {
    message = name_ + " " + kind + ": " + std::to_string(s.objects) + " objects, " +
              std::to_string(s.inconsistent.size()) + " inconsistent";
    if (s.repair) message += ", " + std::to_string(s.repaired) + " repaired";
  }
  host_.log().info("osd", message);
  if (rc == 0) record_scrub_findings(s, kind);
  send_reply(s.conn, command_reply(s.tid, rc, message, json));
  run_waiting(s.waiters);
  publish();
}

// What the operator sees (PG state `inconsistent`, HEALTH_ERR naming the
// objects) follows the last scrub that could have seen a problem: a deep
// scrub or a repair replaces every finding (a repaired copy is no longer
// damaged; an object without a good copy still is); a light scrub, blind to
// data, replaces only the findings of light scrubs and adds its own.
void Pg::record_scrub_findings(const Scrub &s, const std::string &kind) {
  store::Transaction t;
  std::set<std::string> found;
  for (const Scrub::Bad &b : s.inconsistent) {
    if (s.repair && b.good >= 0) continue;
    std::string who;
    for (int32_t o : b.bad) who += (who.empty() ? "osd." : ", osd.") + std::to_string(o);
    found.insert(b.oid);
    set_damaged(t, b.oid, kind + ": " + b.why + " on " + who);
  }
  std::vector<std::string> stale;
  for (const auto &[oid, why] : damaged_)
    if (!found.count(oid) && (s.deep || why.rfind(kLightScrubPrefix, 0) == 0)) stale.push_back(oid);
  for (const std::string &oid : stale) clear_damaged(t, oid);
  if (!t.empty()) queue_local(std::move(t));
}

}  // namespace strata::osd
