#include "mds/store_codec.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstring>
#include <exception>

#include "mds/schema/mds_store.capnp.h"

namespace strata::mds {
namespace {

std::string to_bytes(capnp::MessageBuilder &mb) {
  auto words = capnp::messageToFlatArray(mb);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char *>(bytes.begin()), bytes.size());
}

capnp::Data::Reader data_of(std::string_view s) {
  return capnp::Data::Reader(reinterpret_cast<const kj::byte *>(s.data()), s.size());
}

std::string str_of(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char *>(d.begin()), d.size());
}

// Decodes `bytes` as a message whose root is T and runs `fn` on the root;
// any failure (short, misaligned sizes, out-of-bounds pointers, a value
// outside its range) becomes -EIO naming `what`.
template <class T, class Out, class Fn>
Result<Out> decode_root(std::string_view bytes, const std::string &what, Fn fn) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0)
    return Status::Error(EIO, "corrupt " + what + ": " + std::to_string(bytes.size()) +
                                  " bytes is not a whole encoded record");
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), bytes.size());
  try {
    capnp::ReaderOptions opts;
    opts.traversalLimitInWords = 64ull << 20;
    capnp::FlatArrayMessageReader reader(words, opts);
    auto r = reader.getRoot<T>();
    return fn(r);
  } catch (const kj::Exception &e) {
    return Status::Error(EIO, "corrupt " + what + ": " + std::string(e.getDescription().cStr()));
  } catch (const std::exception &e) {
    return Status::Error(EIO, "corrupt " + what + ": " + e.what());
  }
}

void set_time(disk::Time::Builder b, const Time &t) {
  b.setSec(t.sec);
  b.setNsec(t.nsec);
}
Time get_time(disk::Time::Reader r) { return Time{r.getSec(), r.getNsec()}; }

void fill_inode(disk::Inode::Builder b, const InodeRec &in) {
  b.setIno(in.ino);
  b.setType(static_cast<uint8_t>(in.type));
  b.setMode(in.mode);
  b.setUid(in.uid);
  b.setGid(in.gid);
  b.setNlink(in.nlink);
  b.setSize(in.size);
  b.setBlocks(in.blocks);
  set_time(b.initAtime(), in.atime);
  set_time(b.initMtime(), in.mtime);
  set_time(b.initCtime(), in.ctime);
  set_time(b.initBtime(), in.btime);
  b.setRdev(in.rdev);
  b.setSymlinkTarget(data_of(in.symlink_target));
  b.setObjectSize(in.object_size);
  b.setDataPool(in.data_pool);
  b.setVersion(in.version);
  auto xs = b.initXattrs(static_cast<unsigned>(in.xattrs.size()));
  unsigned i = 0;
  for (const auto &[k, v] : in.xattrs) {
    xs[i].setName(data_of(k));
    xs[i].setValue(data_of(v));
    ++i;
  }
  b.setDataInline(in.data_inline);
  if (!in.inline_data.empty()) b.setInlineData(data_of(in.inline_data));
}

Result<InodeRec> read_inode(disk::Inode::Reader r, const std::string &what) {
  InodeRec in;
  in.ino = r.getIno();
  if (r.getType() > static_cast<uint8_t>(FileType::kBlockDevice))
    return Status::Error(EIO, "corrupt " + what + ": file type " + std::to_string(r.getType()));
  in.type = static_cast<FileType>(r.getType());
  in.mode = r.getMode();
  in.uid = r.getUid();
  in.gid = r.getGid();
  in.nlink = r.getNlink();
  in.size = r.getSize();
  in.blocks = r.getBlocks();
  in.atime = get_time(r.getAtime());
  in.mtime = get_time(r.getMtime());
  in.ctime = get_time(r.getCtime());
  in.btime = get_time(r.getBtime());
  in.rdev = r.getRdev();
  in.symlink_target = str_of(r.getSymlinkTarget());
  in.object_size = r.getObjectSize();
  in.data_pool = r.getDataPool();
  in.version = r.getVersion();
  for (auto x : r.getXattrs()) in.xattrs[str_of(x.getName())] = str_of(x.getValue());
  in.data_inline = r.getDataInline();
  in.inline_data = str_of(r.getInlineData());
  if (in.inline_data.size() > kInlineDataHardMax)
    return Status::Error(EIO, "corrupt " + what + ": " + std::to_string(in.inline_data.size()) +
                                  " bytes of inline data");
  return in;
}

void fill_dentry(disk::Dentry::Builder b, const DentryRec &d) {
  b.setName(data_of(d.name));
  b.setIno(d.ino);
  b.setType(static_cast<uint8_t>(d.type));
  b.setRemote(d.remote);
  b.setHasInode(d.inode.has_value());
  if (d.inode) fill_inode(b.initInode(), *d.inode);
}

Result<DentryRec> read_dentry(disk::Dentry::Reader r, const std::string &what) {
  DentryRec d;
  d.name = str_of(r.getName());
  d.ino = r.getIno();
  if (r.getType() > static_cast<uint8_t>(FileType::kBlockDevice))
    return Status::Error(EIO, "corrupt " + what + ": file type " + std::to_string(r.getType()));
  d.type = static_cast<FileType>(r.getType());
  d.remote = r.getRemote();
  if (r.getHasInode()) {
    auto in = read_inode(r.getInode(), what);
    if (!in.ok()) return in.status();
    d.inode = std::move(*in);
  }
  return d;
}

void fill_session(disk::Session::Builder b, const SessionRec &s) {
  b.setId(s.id);
  b.setClientName(s.client_name);
  b.setDelegatedFirst(s.delegated_first);
  b.setDelegatedCount(s.delegated_count);
  b.setCommittedTid(s.committed_tid);
}

SessionRec read_session(disk::Session::Reader r) {
  SessionRec s;
  s.id = r.getId();
  s.client_name = r.getClientName().cStr();
  s.delegated_first = r.getDelegatedFirst();
  s.delegated_count = r.getDelegatedCount();
  s.committed_tid = r.getCommittedTid();
  return s;
}

void fill_purge(disk::Purge::Builder b, const PurgeRec &p) {
  b.setIno(p.ino);
  b.setSize(p.size);
  b.setDataPool(p.data_pool);
  b.setObjectSize(p.object_size);
}

PurgeRec read_purge(disk::Purge::Reader r) {
  return PurgeRec{r.getIno(), r.getSize(), r.getDataPool(), r.getObjectSize()};
}

}  // namespace

std::string encode_inode(const InodeRec &in) {
  capnp::MallocMessageBuilder mb;
  fill_inode(mb.initRoot<disk::Inode>(), in);
  return to_bytes(mb);
}

Result<InodeRec> decode_inode(std::string_view bytes, const std::string &what) {
  return decode_root<disk::Inode, InodeRec>(
      bytes, what, [&](disk::Inode::Reader r) { return read_inode(r, what); });
}

std::string encode_dentry(const DentryRec &d) {
  capnp::MallocMessageBuilder mb;
  fill_dentry(mb.initRoot<disk::Dentry>(), d);
  return to_bytes(mb);
}

Result<DentryRec> decode_dentry(std::string_view bytes, const std::string &what) {
  return decode_root<disk::Dentry, DentryRec>(
      bytes, what, [&](disk::Dentry::Reader r) { return read_dentry(r, what); });
}

std::string encode_dir_header(uint8_t frag_bits) {
  capnp::MallocMessageBuilder mb;
  mb.initRoot<disk::DirHeader>().setFragBits(frag_bits);
  return to_bytes(mb);
}

Result<uint8_t> decode_dir_header(std::string_view bytes, const std::string &what) {
  return decode_root<disk::DirHeader, uint8_t>(
      bytes, what, [&](disk::DirHeader::Reader r) -> Result<uint8_t> {
        if (r.getFragBits() > 24)
          return Status::Error(
              EIO, "corrupt " + what + ": " + std::to_string(r.getFragBits()) + " fragment bits");
        return r.getFragBits();
      });
}

std::string encode_fsmeta(const FsMeta &m) {
  capnp::MallocMessageBuilder mb;
  auto b = mb.initRoot<disk::FsMeta>();
  b.setFormatVersion(m.format_version);
  b.setInoNext(m.ino_next);
  return to_bytes(mb);
}

Result<FsMeta> decode_fsmeta(std::string_view bytes, const std::string &what) {
  return decode_root<disk::FsMeta, FsMeta>(
      bytes, what, [&](disk::FsMeta::Reader r) -> Result<FsMeta> {
        if (r.getFormatVersion() != 1)
          return Status::Error(
              EIO, what + ": unknown format version " + std::to_string(r.getFormatVersion()));
        return FsMeta{r.getFormatVersion(), r.getInoNext()};
      });
}

std::string encode_journal_head(const JournalHead &h) {
  capnp::MallocMessageBuilder mb;
  auto b = mb.initRoot<disk::JournalHead>();
  b.setHeadSegment(h.head_segment);
  b.setHeadOffset(h.head_offset);
  b.setTailSegment(h.tail_segment);
  b.setAppliedSeq(h.applied_seq);
  return to_bytes(mb);
}

Result<JournalHead> decode_journal_head(std::string_view bytes, const std::string &what) {
  return decode_root<disk::JournalHead, JournalHead>(
      bytes, what, [&](disk::JournalHead::Reader r) -> Result<JournalHead> {
        JournalHead h{r.getHeadSegment(), r.getHeadOffset(), r.getTailSegment(), r.getAppliedSeq()};
        if (h.head_segment > h.tail_segment)
          return Status::Error(EIO, "corrupt " + what + ": head segment " +
                                        std::to_string(h.head_segment) + " after tail " +
                                        std::to_string(h.tail_segment));
        return h;
      });
}

std::string encode_session(const SessionRec &s) {
  capnp::MallocMessageBuilder mb;
  fill_session(mb.initRoot<disk::Session>(), s);
  return to_bytes(mb);
}

Result<SessionRec> decode_session(std::string_view bytes, const std::string &what) {
  return decode_root<disk::Session, SessionRec>(
      bytes, what, [&](disk::Session::Reader r) -> Result<SessionRec> { return read_session(r); });
}

std::string encode_purge(const PurgeRec &p) {
  capnp::MallocMessageBuilder mb;
  fill_purge(mb.initRoot<disk::Purge>(), p);
  return to_bytes(mb);
}

Result<PurgeRec> decode_purge(std::string_view bytes, const std::string &what) {
  return decode_root<disk::Purge, PurgeRec>(
      bytes, what, [&](disk::Purge::Reader r) -> Result<PurgeRec> { return read_purge(r); });
}

std::string encode_update(const MetaUpdate &u) {
  capnp::MallocMessageBuilder mb;
  auto b = mb.initRoot<disk::MetaUpdate>();
  auto ds = b.initDentries(static_cast<unsigned>(u.dentries.size()));
  for (unsigned i = 0; i < u.dentries.size(); ++i) {
    const auto &c = u.dentries[i];
    ds[i].setDir(c.dir);
    ds[i].setName(data_of(c.name));
    ds[i].setHasDentry(c.dentry.has_value());
    if (c.dentry) fill_dentry(ds[i].initDentry(), *c.dentry);
  }
  auto is = b.initInodes(static_cast<unsigned>(u.inodes.size()));
  for (unsigned i = 0; i < u.inodes.size(); ++i) {
    is[i].setIno(u.inodes[i].ino);
    is[i].setHasInode(u.inodes[i].inode.has_value());
    if (u.inodes[i].inode) fill_inode(is[i].initInode(), *u.inodes[i].inode);
  }
  b.setHasInoNext(u.ino_next.has_value());
  if (u.ino_next) b.setInoNext(*u.ino_next);
  auto ss = b.initSessions(static_cast<unsigned>(u.sessions.size()));
  for (unsigned i = 0; i < u.sessions.size(); ++i) {
    ss[i].setId(u.sessions[i].id);
    ss[i].setHasSession(u.sessions[i].session.has_value());
    if (u.sessions[i].session) fill_session(ss[i].initSession(), *u.sessions[i].session);
  }
  auto ps = b.initPurges(static_cast<unsigned>(u.purges.size()));
  for (unsigned i = 0; i < u.purges.size(); ++i) fill_purge(ps[i], u.purges[i]);
  auto rd = b.initRemovedDirs(static_cast<unsigned>(u.removed_dirs.size()));
  for (unsigned i = 0; i < u.removed_dirs.size(); ++i) rd.set(i, u.removed_dirs[i]);
  auto db = b.initDroppedBackPointers(static_cast<unsigned>(u.dropped_back_pointers.size()));
  for (unsigned i = 0; i < u.dropped_back_pointers.size(); ++i)
    db.set(i, u.dropped_back_pointers[i]);
  return to_bytes(mb);
}

Result<MetaUpdate> decode_update(std::string_view bytes, const std::string &what) {
  return decode_root<disk::MetaUpdate, MetaUpdate>(
      bytes, what, [&](disk::MetaUpdate::Reader r) -> Result<MetaUpdate> {
        MetaUpdate u;
        for (auto c : r.getDentries()) {
          DentryChange dc;
          dc.dir = c.getDir();
          dc.name = str_of(c.getName());
          if (c.getHasDentry()) {
            auto d = read_dentry(c.getDentry(), what);
            if (!d.ok()) return d.status();
            dc.dentry = std::move(*d);
          }
          u.dentries.push_back(std::move(dc));
        }
        for (auto c : r.getInodes()) {
          InodeChange ic;
          ic.ino = c.getIno();
          if (c.getHasInode()) {
            auto in = read_inode(c.getInode(), what);
            if (!in.ok()) return in.status();
            ic.inode = std::move(*in);
          }
          u.inodes.push_back(std::move(ic));
        }
        if (r.getHasInoNext()) u.ino_next = r.getInoNext();
        for (auto c : r.getSessions()) {
          SessionChange sc;
          sc.id = c.getId();
          if (c.getHasSession()) sc.session = read_session(c.getSession());
          u.sessions.push_back(std::move(sc));
        }
        for (auto p : r.getPurges()) u.purges.push_back(read_purge(p));
        for (uint64_t d : r.getRemovedDirs()) u.removed_dirs.push_back(d);
        for (uint64_t i : r.getDroppedBackPointers()) u.dropped_back_pointers.push_back(i);
        return u;
      });
}

}  // namespace strata::mds
