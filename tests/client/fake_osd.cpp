#include "fake_osd.h"

#include <capnp/message.h>

#include <chrono>

#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"
#include "placement/pg.h"

namespace clienttest {

using namespace strata;

namespace {

std::string str(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }
std::string str(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char *>(d.begin()), d.size());
}
capnp::Data::Reader bytes(const std::string &s) {
  return capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(s.data()), s.size());
}
uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

bool compare(const std::string &have, const std::string &want, wire::CmpMode m) {
  int c = have.compare(want);
  switch (m) {
    case wire::CmpMode::EQ: return c == 0;
    case wire::CmpMode::NE: return c != 0;
    case wire::CmpMode::GT: return c > 0;
    case wire::CmpMode::GE: return c >= 0;
    case wire::CmpMode::LT: return c < 0;
    case wire::CmpMode::LE: return c <= 0;
  }
  return false;
}

}  // namespace

struct FakeOsd::Object {
  std::string data;
  std::map<std::string, std::string> xattrs, omap;
  std::string header;
  uint64_t version = 0;
  uint64_t mtime_ns = 0;
};

struct FakeOsd::Store {
  std::map<std::pair<uint32_t, std::string>, Object> objects;
  uint64_t last_version = 0;
};

FakeOsd::FakeOsd(int id, std::string host, std::string mon_addr,
                 std::map<std::string, std::string> keys, Logger &log)
    : id_(id), host_(std::move(host)), mon_addr_(std::move(mon_addr)), keys_(std::move(keys)),
      log_(log), store_(std::make_unique<Store>()) {}

FakeOsd::~FakeOsd() { stop(); }

Status FakeOsd::start() {
  std::string entity = "osd." + std::to_string(id_);
  accepted_ = std::make_shared<std::map<std::string, std::string>>(keys_);
  messenger_ = std::make_unique<msg::Messenger>(
      entity, keys_.at(entity),
      [keys = accepted_, mu = accepted_mu_](const std::string &e) -> std::optional<std::string> {
        std::lock_guard lk(*mu);
        auto it = keys->find(e);
        if (it == keys->end()) return std::nullopt;
        return it->second;
      },
      log_);
  msg::Handlers h;
  h.on_message = [this](const msg::ConnectionRef &c, msg::Message &&m) {
    on_message(c, std::move(m));
  };
  messenger_->set_handlers(std::move(h));
  auto bound = messenger_->listen("127.0.0.1", 0);
  if (!bound.ok()) return bound.status();
  addr_ = *bound;
  messenger_->start();

  mon::MonClientOptions mo;
  mo.mon_addr = mon_addr_;
  mo.entity = entity;
  mo.secret = keys_.at(entity);
  mon_ = std::make_unique<mon::MonClient>(mo, log_);
  mon_->on_connect([this] {
    capnp::MallocMessageBuilder b;
    auto boot = b.initRoot<wire::OsdBoot>();
    boot.setId(id_);
    boot.setAddr(addr_);
    boot.setHost(host_);
    mon_->send(msg::make_message(msg::kMsgOsdBoot, b));
  });
  return mon_->start();
}

void FakeOsd::stop() {
  if (mon_) mon_->stop();
  if (messenger_) messenger_->stop();
}

uint64_t FakeOsd::epoch() const { return mon_ ? mon_->epoch() : 0; }

void FakeOsd::set_fault(std::function<Fault(const ReceivedOp &)> f) {
  std::lock_guard<std::mutex> g(mu_);
  fault_ = std::move(f);
}

std::vector<ReceivedOp> FakeOsd::received() const {
  std::lock_guard<std::mutex> g(mu_);
  return received_;
}

int FakeOsd::applied(const std::string &client, uint64_t tid) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = applied_.find({client, tid});
  return it == applied_.end() ? 0 : it->second;
}

int FakeOsd::replays() const {
  std::lock_guard<std::mutex> g(mu_);
  return replays_;
}

void FakeOsd::on_message(const msg::ConnectionRef &c, msg::Message &&m) {
  switch (m.type) {
    case msg::kMsgOpRequest: handle_op(c, m); break;
    case msg::kMsgPgListRequest: handle_pg_list(c, m); break;
    case msg::kMsgPgCommand: handle_pg_command(c, m); break;
    default: break;
  }
}

void FakeOsd::handle_op(const msg::ConnectionRef &c, const msg::Message &m) {
  capnp::MallocMessageBuilder b;
  auto reply = b.initRoot<wire::OpReply>();
  std::vector<std::string> segments;
  bool close_after = false;
  bool answer = true;
  Status st = msg::read_message<wire::OpRequest>(m, "OpRequest", [&](wire::OpRequest::Reader r) {
    ReceivedOp rec{str(r.getClient()), r.getTid(),  str(r.getOid()), r.getPool(),
                   r.getSeed(),        r.getMapEpoch(), r.getIsWrite()};
    std::lock_guard<std::mutex> g(mu_);
    received_.push_back(rec);
    Fault f = fault_ ? fault_(rec) : Fault::kNone;
    reply.setTid(rec.tid);
    if (f == Fault::kDrop) {
      answer = false;
      return Status::OK();
    }
    if (f == Fault::kCloseBefore) {
      answer = false;
      close_after = true;
      return Status::OK();
    }
    if (f == Fault::kRetryNextEpoch) {
      reply.setRetryEpoch((mon_ ? mon_->epoch() : 0) + 1);
      return Status::OK();
    }
    if (f == Fault::kRetrySameEpoch) {
      reply.setRetryEpoch(rec.map_epoch);
      return Status::OK();
    }
    close_after = f == Fault::kCloseAfterApply;
    answer = !close_after;
    auto key = std::make_pair(rec.client, rec.tid);
    if (rec.is_write) {
      if (auto it = done_.find(key); it != done_.end()) {
        reply.setRc(it->second.first);
        reply.setVersion(it->second.second);
        reply.setReplayed(true);
        replays_++;
        return Status::OK();
      }
    }

    auto okey = std::make_pair(rec.pool, rec.oid);
    auto found = store_->objects.find(okey);
    const bool orig_exists = found != store_->objects.end();
    const Object orig = orig_exists ? found->second : Object{};
    Object cur = orig;
    bool cur_exists = orig_exists;
    bool mutated = false;
    int rc = 0;
    auto ops = r.getOps();
    auto results = reply.initResults(ops.size());
    unsigned ran = 0;
    auto seg = [&](int32_t idx) -> std::string {
      auto s = msg::segment(m, idx, "OpRequest");
      return s.ok() ? std::string(*s) : std::string();
    };
    for (auto op : ops) {
      auto res = results[ran++];
      int orc = 0;
      std::string name = str(op.getName()), name2 = str(op.getName2());
      switch (op.getCode()) {
        case wire::OpCode::ASSERT_EXISTS: orc = orig_exists ? 0 : -ENOENT; break;
        case wire::OpCode::ASSERT_VERSION:
          orc = (orig_exists ? orig.version : 0) == op.getVersion() ? 0 : -ERANGE;
          break;
        case wire::OpCode::CMP_XATTR: {
          if (!orig_exists) { orc = -ENOENT; break; }
          auto it = orig.xattrs.find(name);
          std::string have = it == orig.xattrs.end() ? "" : it->second;
          orc = compare(have, seg(op.getDataSeg()), op.getCmpMode()) ? 0 : -ECANCELED;
          break;
        }
        case wire::OpCode::READ: {
          if (!orig_exists) { orc = -ENOENT; break; }
          uint64_t off = op.getOffset(), len = op.getLength() ? op.getLength() : UINT64_MAX;
          std::string d = off >= orig.data.size() ? "" : orig.data.substr(off, len);
          res.setDataSeg(int32_t(segments.size()));
          segments.push_back(std::move(d));
          break;
        }
        case wire::OpCode::STAT:
          if (!orig_exists) { orc = -ENOENT; break; }
          res.setSize(orig.data.size());
          res.setMtimeNs(orig.mtime_ns);
          break;
        case wire::OpCode::GET_XATTR: {
          if (!orig_exists) { orc = -ENOENT; break; }
          auto it = orig.xattrs.find(name);
          if (it == orig.xattrs.end()) { orc = -ENODATA; break; }
          res.setDataSeg(int32_t(segments.size()));
          segments.push_back(it->second);
          break;
        }
        case wire::OpCode::GET_XATTRS: {
          if (!orig_exists) { orc = -ENOENT; break; }
          auto k = res.initKeys(unsigned(orig.xattrs.size()));
          auto v = res.initValues(unsigned(orig.xattrs.size()));
          unsigned i = 0;
          for (const auto &[xk, xv] : orig.xattrs) {
            k.set(i, bytes(xk));
            v.set(i++, bytes(xv));
          }
          break;
        }
        case wire::OpCode::OMAP_GET_HEADER:
          if (!orig_exists) { orc = -ENOENT; break; }
          res.setDataSeg(int32_t(segments.size()));
          segments.push_back(orig.header);
          break;
        case wire::OpCode::OMAP_GET_BY_KEYS: {
          if (!orig_exists) { orc = -ENOENT; break; }
          std::vector<std::pair<std::string, std::string>> found_kv;
          for (auto k : op.getKeys()) {
            auto it = orig.omap.find(str(k));
            if (it != orig.omap.end()) found_kv.push_back(*it);
          }
          auto k = res.initKeys(unsigned(found_kv.size()));
          auto v = res.initValues(unsigned(found_kv.size()));
          for (unsigned i = 0; i < found_kv.size(); ++i) {
            k.set(i, bytes(found_kv[i].first));
            v.set(i, bytes(found_kv[i].second));
          }
          break;
        }
        case wire::OpCode::OMAP_LIST: {
          if (!orig_exists) { orc = -ENOENT; break; }
          uint64_t max = op.getLength() ? op.getLength() : 1000;
          std::vector<std::pair<std::string, std::string>> page;
          auto it = name.empty() ? orig.omap.begin() : orig.omap.upper_bound(name);
          for (; it != orig.omap.end(); ++it) {
            if (!name2.empty() && it->first >= name2) break;
            if (page.size() == max) {
              res.setMore(true);
              break;
            }
            page.push_back(*it);
          }
          auto k = res.initKeys(unsigned(page.size()));
          auto v = res.initValues(unsigned(page.size()));
          for (unsigned i = 0; i < page.size(); ++i) {
            k.set(i, bytes(page[i].first));
            v.set(i, bytes(page[i].second));
          }
          break;
        }
        case wire::OpCode::WRITE: {
          std::string d = seg(op.getDataSeg());
          uint64_t off = op.getOffset();
          if (cur.data.size() < off + d.size()) cur.data.resize(off + d.size());
          cur.data.replace(off, d.size(), d);
          cur_exists = mutated = true;
          break;
        }
        case wire::OpCode::WRITE_FULL:
          cur.data = seg(op.getDataSeg());
          cur_exists = mutated = true;
          break;
        case wire::OpCode::APPEND:
          cur.data += seg(op.getDataSeg());
          cur_exists = mutated = true;
          break;
        case wire::OpCode::TRUNCATE:
          cur.data.resize(op.getOffset());
          cur_exists = mutated = true;
          break;
        case wire::OpCode::ZERO:
          if (cur_exists && op.getOffset() < cur.data.size()) {
            uint64_t n = std::min<uint64_t>(op.getLength(), cur.data.size() - op.getOffset());
            cur.data.replace(op.getOffset(), n, std::string(n, '\0'));
          }
          mutated = true;
          break;
        case wire::OpCode::REMOVE:
          if (!cur_exists) { orc = -ENOENT; break; }
          cur = Object{};
          cur_exists = false;
          mutated = true;
          break;
        case wire::OpCode::CREATE:
          if (cur_exists && (op.getFlags() & 1)) { orc = -EEXIST; break; }
          cur_exists = mutated = true;
          break;
        case wire::OpCode::SET_XATTR:
          cur.xattrs[name] = seg(op.getDataSeg());
          cur_exists = mutated = true;
          break;
        case wire::OpCode::RM_XATTR:
          if (!cur_exists) { orc = -ENOENT; break; }
          if (!cur.xattrs.erase(name)) { orc = -ENODATA; break; }
          mutated = true;
          break;
        case wire::OpCode::OMAP_SET: {
          auto k = op.getKeys();
          auto v = op.getValues();
          for (unsigned i = 0; i < k.size() && i < v.size(); ++i) cur.omap[str(k[i])] = str(v[i]);
          cur_exists = mutated = true;
          break;
        }
        case wire::OpCode::OMAP_RM_KEYS:
          if (!cur_exists) { orc = -ENOENT; break; }
          for (auto k : op.getKeys()) cur.omap.erase(str(k));
          mutated = true;
          break;
        case wire::OpCode::OMAP_RM_RANGE: {
          if (!cur_exists) { orc = -ENOENT; break; }
          auto from = cur.omap.lower_bound(name);
          auto to = name2.empty() ? cur.omap.end() : cur.omap.lower_bound(name2);
          if (from != cur.omap.end() && (to == cur.omap.end() || from->first < to->first))
            cur.omap.erase(from, to);
          mutated = true;
          break;
        }
        case wire::OpCode::OMAP_CLEAR:
          if (!cur_exists) { orc = -ENOENT; break; }
          cur.omap.clear();
          mutated = true;
          break;
        case wire::OpCode::OMAP_SET_HEADER:
          cur.header = seg(op.getDataSeg());
          cur_exists = mutated = true;
          break;
        case wire::OpCode::SNAP_CONTEXT:
        case wire::OpCode::SNAP_TRIM:
        case wire::OpCode::SNAP_ROLLBACK:
        case wire::OpCode::SET_SNAP:
        case wire::OpCode::LIST_SNAPS:
          // Object snapshots are the real OSD's (tests/osd covers them).
          orc = -EOPNOTSUPP;
          break;
      }
      res.setRc(orc);
      if (orc < 0) {
        rc = orc;
        break;
      }
    }
    // Like the real OSD: results only for the ops that ran.
    if (ran < ops.size()) {
      capnp::MallocMessageBuilder tmp;
      auto trimmed = tmp.initRoot<wire::OpReply>().initResults(ran);
      for (unsigned i = 0; i < ran; ++i) trimmed.setWithCaveats(i, results[i].asReader());
      reply.setResults(trimmed.asReader());
    }
    reply.setRc(rc);
    uint64_t version = orig.version;
    if (rc == 0 && mutated) {
      if (cur_exists) {
        cur.version = version = ++store_->last_version;
        cur.mtime_ns = now_ns();
        store_->objects[okey] = cur;
      } else {
        store_->objects.erase(okey);
        version = ++store_->last_version;
      }
      applied_[key]++;
    }
    reply.setVersion(version);
    if (rec.is_write) done_[key] = {rc, version};
    return Status::OK();
  });
  if (!st.ok()) {
    c->close(st.message());
    return;
  }
  if (answer) c->send(msg::make_message(msg::kMsgOpReply, b, std::move(segments)));
  if (close_after) c->close("fault injected");
}

void FakeOsd::handle_pg_list(const msg::ConnectionRef &c, const msg::Message &m) {
  capnp::MallocMessageBuilder b;
  auto reply = b.initRoot<wire::PgListReply>();
  Status st = msg::read_message<wire::PgListRequest>(m, "PgListRequest", [&](auto r) {
    reply.setTid(r.getTid());
    // Like a real OSD: a client with a newer map than ours makes us wait
    // for it (its pool may be brand new).
    auto newer = mon_->wait_for_map(r.getMapEpoch(), std::chrono::seconds(5));
    auto map = newer.ok() ? *newer : mon_->map();
    const cluster::PoolInfo *pool = map ? map->pool(r.getPool()) : nullptr;
    if (!pool) {
      reply.setRc(-ENOENT);
      return Status::OK();
    }
    std::string after = str(r.getStartAfter());
    uint32_t limit = r.getLimit() ? r.getLimit() : 1000;
    std::vector<std::string> names;
    bool more = false;
    std::lock_guard<std::mutex> g(mu_);
    for (const auto &[key, obj] : store_->objects) {
      if (key.first != r.getPool()) continue;
      if (placement::object_to_pg(key.second, pool->pg_num) != r.getSeed()) continue;
      if (!after.empty() && key.second <= after) continue;
      if (names.size() == limit) {
        more = true;
        break;
      }
      names.push_back(key.second);
    }
    auto list = reply.initNames(unsigned(names.size()));
    for (unsigned i = 0; i < names.size(); ++i) list.set(i, names[i]);
    reply.setMore(more);
    return Status::OK();
  });
  if (st.ok()) c->send(msg::make_message(msg::kMsgPgListReply, b));
}

void FakeOsd::handle_pg_command(const msg::ConnectionRef &c, const msg::Message &m) {
  capnp::MallocMessageBuilder b;
  auto reply = b.initRoot<wire::PgCommandReply>();
  Status st = msg::read_message<wire::PgCommand>(m, "PgCommand", [&](auto r) {
    reply.setTid(r.getTid());
    std::string what = r.getRepair() ? "repair" : (r.getDeep() ? "deep-scrub" : "scrub");
    reply.setMessage(what + " of pg " + std::to_string(r.getPool()) + "." +
                     std::to_string(r.getSeed()) + " on osd." + std::to_string(id_) + ": ok");
    reply.setJson("{\"errors\":0}");
    return Status::OK();
  });
  if (st.ok()) c->send(msg::make_message(msg::kMsgPgCommandReply, b));
}

void FakeOsd::revoke(const std::string &entity) {
  {
    std::lock_guard lk(*accepted_mu_);
    accepted_->erase(entity);
  }
  messenger_->close_entity(entity, entity + "'s key was removed");
}

}  // namespace clienttest
