#include "mds/fs_check.h"

#include <algorithm>
#include <map>
#include <set>

#include "mds/store_codec.h"
#include "mds/store_names.h"

namespace strata::mds {
namespace {

using client::ObjectOperation;

class Checker {
 public:
  Checker(client::ClusterClient &c, uint32_t meta, uint32_t data, bool repair)
      : c_(c), meta_(meta), data_(data), repair_(repair) {}

  Result<FsCheckReport> run() {
    if (Status st = check_journal(); !st.ok()) return st;
    auto meta_objs = list_pool(meta_);
    if (!meta_objs.ok()) return meta_objs.status();
    for (const auto &o : *meta_objs) {
      if (auto d = parse_dir_oid(o))
        dir_objects_[d->ino].insert(o);
      else if (auto i = parse_inode_oid(o))
        inode_objects_.insert(*i);
    }
    if (Status st = read_purges(); !st.ok()) return st;
    // The root's inode lives in i.1; the stray directory has none.
    auto root = read_inode(kRootIno);
    if (!root.ok()) return root.status();
    if (Status st = walk(kRootIno, *root ? &**root : nullptr, {}); !st.ok()) return st;
    if (Status st = walk(kStrayIno, nullptr, {}); !st.ok()) return st;
    if (Status st = check_hard_links(); !st.ok()) return st;
    if (Status st = check_orphans(); !st.ok()) return st;
    if (Status st = check_data(); !st.ok()) return st;
    if (Status st = check_back_pointers(); !st.ok()) return st;
    return std::move(report_);
  }

 private:
  struct Place {  // where a directory's inode is kept: a parent's dentry
    Ino parent = 0;
    std::string name;
  };

  Result<client::OpOutcome> exec(uint32_t pool, const std::string &oid, ObjectOperation op) {
    auto r = c_.execute(pool, oid, std::move(op));
    if (!r.ok()) return r.status().Context(oid);
    return r;
  }

  void problem(std::string kind, std::string object, std::string detail, bool repaired = false) {
    report_.problems.push_back(
        FsProblem{std::move(kind), std::move(object), std::move(detail), repaired});
  }

  Status check_journal() {
    std::string header;
    ObjectOperation op;
    op.omap_get_header([&](const client::StepResult &s) {
      if (s.rc == 0) header.assign(s.data);
    });
    auto r = exec(meta_, kJournalOid, std::move(op));
    if (!r.ok()) return r.status();
    if (r->rc == -ENOENT)
      return Status::Error(ENOENT, "no filesystem in this pool (no mds.journal)");
    if (r->rc != 0) return Status::Error(r->rc, std::string("reading ") + kJournalOid);
    auto h = decode_journal_head(header, std::string(kJournalOid) + " header");
    if (!h.ok()) return h.status();
    for (uint64_t seg = h->head_segment; seg <= h->tail_segment; ++seg) {
      uint64_t size = 0;
      ObjectOperation st;
      st.stat([&](const client::StepResult &s) { size = s.size; });
      auto sr = exec(meta_, segment_oid(seg), std::move(st));
      if (!sr.ok()) return sr.status();
      if (sr->rc == -ENOENT) continue;
      uint64_t from = seg == h->head_segment ? h->head_offset : 0;
      if (sr->rc == 0 && size > from)
        return Status::Error(EBUSY, "the metadata journal has entries not yet applied (" +
                                        segment_oid(seg) + " past offset " + std::to_string(from) +
                                        "): an MDS is active, or the next one to open the "
                                        "filesystem applies them; check after that");
    }
    return Status::OK();
  }

  Result<std::vector<std::string>> list_pool(uint32_t pool) {
    auto info = c_.find_pool(pool);
    if (!info.ok()) return info.status();
    std::vector<std::string> out;
    for (uint32_t seed = 0; seed < info->pg_num; ++seed) {
      std::string after;
      while (true) {
        auto r = c_.pg_list(pool, seed, after, 1000);
        if (!r.ok()) return r.status();
        if (r->rc != 0) return Status::Error(r->rc, "listing pool " + info->name);
        for (auto &n : r->names) out.push_back(n);
        if (!r->more || r->names.empty()) break;
        after = r->names.back();
      }
    }
    return out;
  }

  Status read_purges() {
    std::string after;
    while (true) {
      std::vector<std::string> keys;
      bool more = false;
      ObjectOperation op;
      op.omap_list(after, "", 1000, [&](const client::StepResult &s) {
        if (s.rc != 0) return;
        for (auto k : s.keys) keys.emplace_back(k);
        more = s.more;
      });
      auto r = exec(meta_, kFsMetaOid, std::move(op));
      if (!r.ok()) return r.status();
      if (r->rc != 0) return Status::Error(r->rc, std::string("listing ") + kFsMetaOid);
      for (auto &k : keys)
        if (k.rfind("purge.", 0) == 0)
          if (auto ino = parse_hex(k.substr(6))) known_data_.insert(*ino);
      if (!more || keys.empty()) return Status::OK();
      after = keys.back();
    }
  }

  Result<std::optional<InodeRec>> read_inode(Ino ino) {
    std::string header;
    ObjectOperation op;
    op.omap_get_header([&](const client::StepResult &s) {
      if (s.rc == 0) header.assign(s.data);
    });
    auto r = exec(meta_, inode_oid(ino), std::move(op));
    if (!r.ok()) return r.status();
    if (r->rc == -ENOENT || (r->rc == 0 && header.empty())) return std::optional<InodeRec>();
    if (r->rc != 0) return Status::Error(r->rc, "reading " + inode_oid(ino));
    auto in = decode_inode(header, inode_oid(ino) + " header");
    if (!in.ok()) {
      problem("bad_inode", inode_oid(ino), in.status().message());
      return std::optional<InodeRec>();
    }
    return std::optional<InodeRec>(std::move(*in));
  }

  Result<uint8_t> bits_of(Ino dir) {
    std::string header;
    ObjectOperation op;
    op.omap_get_header([&](const client::StepResult &s) {
      if (s.rc == 0) header.assign(s.data);
    });
    auto r = exec(meta_, dir_oid(dir, 0), std::move(op));
    if (!r.ok()) return r.status();
    if (r->rc == -ENOENT || header.empty()) return uint8_t{0};
    if (r->rc != 0) return Status::Error(r->rc, "reading " + dir_oid(dir, 0));
    return decode_dir_header(header, dir_oid(dir, 0) + " header");
  }

  // Every omap entry of one object, (key, value) in key order; none when
  // the object does not exist.
  Status omap_of(const std::string &oid, std::vector<std::pair<std::string, std::string>> &out) {
    std::string after;
    while (true) {
      size_t before = out.size();
      bool more = false;
      ObjectOperation op;
      op.omap_list(after, "", 1000, [&](const client::StepResult &s) {
        if (s.rc != 0) return;
        for (size_t i = 0; i < s.keys.size() && i < s.values.size(); ++i)
          out.emplace_back(std::string(s.keys[i]), std::string(s.values[i]));
        more = s.more;
      });
      auto r = exec(meta_, oid, std::move(op));
      if (!r.ok()) return r.status();
      if (r->rc == -ENOENT) return Status::OK();
      if (r->rc != 0) return Status::Error(r->rc, "listing " + oid);
      if (!more || out.size() == before) return Status::OK();
      after = out.back().first;
    }
  }

  // Every entry of a directory: (fragment oid, name, raw value).
  Status entries_of(Ino dir, std::vector<std::tuple<std::string, std::string, std::string>> &out) {
    auto bits = bits_of(dir);
    if (!bits.ok()) return bits.status();
    for (uint32_t f = 0; f < (1u << *bits); ++f) {
      const std::string oid = dir_oid(dir, f);
      std::vector<std::pair<std::string, std::string>> kv;
      if (Status st = omap_of(oid, kv); !st.ok()) return st;
      for (auto &[k, v] : kv)
        if (frag_of(k, *bits) == f) out.emplace_back(oid, k, std::move(v));
    }
    return Status::OK();
  }

  Status walk(Ino dir, const InodeRec *dir_inode, Place place) {
    if (!reached_dirs_.insert(dir).second) {
      problem("dir_linked_twice", dir_oid(dir, 0), "directory reached by a second name");
      return Status::OK();
    }
    report_.directories++;
    std::vector<std::tuple<std::string, std::string, std::string>> entries;
    if (Status st = entries_of(dir, entries); !st.ok()) return st;
    uint32_t subdirs = 0;
    std::vector<std::pair<DentryRec, Place>> children;
    for (auto &[oid, name, value] : entries) {
      auto d = decode_dentry(value, oid + " key " + name);
      if (!d.ok()) {
        problem("bad_dentry", oid, d.status().message());
        continue;
      }
      if (d->type == FileType::kDirectory) ++subdirs;
      if (d->remote) {
        remote_names_[d->ino]++;
        known_data_.insert(d->ino);
        if (!inode_objects_.count(d->ino))
          problem(
              "missing_inode", oid,
              "remote dentry '" + name + "' names " + inode_oid(d->ino) + ", which does not exist");
        continue;
      }
      if (!d->inode) {
        problem("bad_dentry", oid, "primary dentry '" + name + "' has no inode");
        continue;
      }
      primaries_[d->ino] = Place{dir, name};
      if (d->inode->ino != d->ino)
        problem("ino_mismatch", oid,
                "dentry '" + name + "' names ino " + hex16(d->ino) + ", its inode says " +
                    hex16(d->inode->ino));
      // An inline file's bytes are in its inode: an object of it is stale
      // (a client died turning it into a file in objects).
      if (d->inode->data_inline)
        inline_files_.insert(d->ino);
      else
        known_data_.insert(d->ino);
      if (d->type == FileType::kDirectory)
        children.emplace_back(std::move(*d), Place{dir, name});
      else
        report_.files++;
    }
    if (dir_inode && dir_inode->nlink != 2 + subdirs) {
      std::string where =
          place.parent ? dir_oid(place.parent, 0) + " key " + place.name : inode_oid(dir);
      bool fixed = false;
      if (repair_) {
        InodeRec in = *dir_inode;
        in.nlink = 2 + subdirs;
        auto st = place.parent ? rewrite_dentry(place, in) : rewrite_inode(in);
        if (!st.ok()) return st;
        fixed = true;
      }
      problem("bad_nlink", where,
              "directory " + hex16(dir) + " has nlink " + std::to_string(dir_inode->nlink) +
                  ", expected " + std::to_string(2 + subdirs),
              fixed);
    }
    for (auto &[d, p] : children)
      if (Status st = walk(d.ino, &*d.inode, p); !st.ok()) return st;
    return Status::OK();
  }

  Status rewrite_dentry(const Place &p, const InodeRec &in) {
    auto bits = bits_of(p.parent);
    if (!bits.ok()) return bits.status();
    DentryRec d;
    d.name = p.name;
    d.ino = in.ino;
    d.type = in.type;
    d.inode = in;
    ObjectOperation op;
    op.omap_set({p.name}, {encode_dentry(d)});
    std::string oid = dir_oid(p.parent, frag_of(p.name, *bits));
    auto r = exec(meta_, oid, std::move(op));
    if (!r.ok()) return r.status();
    if (r->rc != 0) return Status::Error(r->rc, "repairing " + oid);
    return Status::OK();
  }

  Status rewrite_inode(const InodeRec &in) {
    ObjectOperation op;
    op.omap_set_header(encode_inode(in));
    auto r = exec(meta_, inode_oid(in.ino), std::move(op));
    if (!r.ok()) return r.status();
    if (r->rc != 0) return Status::Error(r->rc, "repairing " + inode_oid(in.ino));
    return Status::OK();
  }

  static std::string back_pointer_value(const Place &p) {
    std::string v;
    for (int i = 0; i < 8; ++i) v.push_back(static_cast<char>((p.parent >> (8 * i)) & 0xff));
    return v + p.name;
  }

  // Each primary inode's back-pointer (b.<ino % 64>, key hex16(ino): the
  // parent, 8 bytes little-endian, then the name) must name the dentry that
  // holds it: an MDS that took over finds inodes it never saw through them.
  // One of an inode that no primary dentry holds is stale (repaired by
  // removing it); a missing or wrong one is rewritten.
  Status check_back_pointers() {
    std::map<Ino, std::string> seen;
    for (unsigned shard = 0; shard < 64; ++shard) {
      const std::string oid = backptr_oid(shard);
      std::vector<std::pair<std::string, std::string>> entries;
      if (Status st = omap_of(oid, entries); !st.ok()) return st;
      std::vector<std::string> stale;
      for (auto &[key, value] : entries) {
        auto ino = parse_hex(key);
        if (!ino || !primaries_.count(*ino)) {
          stale.push_back(key);
          continue;
        }
        seen[*ino] = std::move(value);
      }
      if (!stale.empty()) {
        for (size_t i = 0; repair_ && i < stale.size(); i += 1000) {
          ObjectOperation op;
          op.omap_rm_keys(std::vector<std::string>(
              stale.begin() + i, stale.begin() + std::min(stale.size(), i + 1000)));
          auto r = exec(meta_, oid, std::move(op));
          if (!r.ok()) return r.status();
          if (r->rc != 0) return Status::Error(r->rc, "repairing " + oid);
        }
        // One line per shard: a leak leaves thousands.
        problem("stale_backptr", oid,
                std::to_string(stale.size()) + " back-pointers of inodes no dentry holds (first " +
                    stale.front() + ")",
                repair_);
      }
    }
    for (const auto &[ino, place] : primaries_) {
      if (ino == kRootIno) continue;
      const std::string want = back_pointer_value(place);
      auto it = seen.find(ino);
      if (it != seen.end() && it->second == want) continue;
      const std::string oid = backptr_oid(ino);
      if (repair_) {
        ObjectOperation op;
        op.omap_set({hex16(ino)}, {want});
        auto r = exec(meta_, oid, std::move(op));
        if (!r.ok()) return r.status();
        if (r->rc != 0) return Status::Error(r->rc, "repairing " + oid);
      }
      problem("bad_backptr", oid,
              "inode " + hex16(ino) +
                  (it == seen.end() ? " has no back-pointer" : "'s back-pointer") + " (dentry '" +
                  place.name + "' in " + hex16(place.parent) + ")",
              repair_);
    }
    return Status::OK();
  }

  Status remove(uint32_t pool, const std::string &oid) {
    ObjectOperation op;
    op.remove();
    auto r = exec(pool, oid, std::move(op));
    if (!r.ok()) return r.status();
    if (r->rc != 0 && r->rc != -ENOENT) return Status::Error(r->rc, "removing " + oid);
    return Status::OK();
  }

  Status check_hard_links() {
    for (Ino ino : inode_objects_) {
      if (ino == kRootIno) continue;
      auto in = read_inode(ino);
      if (!in.ok()) return in.status();
      if (!*in) continue;
      uint32_t names = remote_names_.count(ino) ? remote_names_[ino] : 0;
      if (names == 0) continue;  // an orphan: below
      if ((*in)->nlink != names) {
        bool fixed = false;
        if (repair_) {
          InodeRec fix = **in;
          fix.nlink = names;
          if (Status st = rewrite_inode(fix); !st.ok()) return st;
          fixed = true;
        }
        problem("bad_nlink", inode_oid(ino),
                "nlink " + std::to_string((*in)->nlink) + ", " + std::to_string(names) + " names",
                fixed);
      }
    }
    return Status::OK();
  }

  Status check_orphans() {
    for (auto &[ino, oids] : dir_objects_) {
      if (reached_dirs_.count(ino)) continue;
      for (const auto &oid : oids) {
        bool fixed = false;
        if (repair_) {
          if (Status st = remove(meta_, oid); !st.ok()) return st;
          fixed = true;
        }
        problem("orphan_dir", oid, "no name leads to directory " + hex16(ino), fixed);
      }
    }
    for (Ino ino : inode_objects_) {
      if (ino == kRootIno || remote_names_.count(ino)) continue;
      bool fixed = false;
      if (repair_) {
        if (Status st = remove(meta_, inode_oid(ino)); !st.ok()) return st;
        fixed = true;
      }
      problem("orphan_inode", inode_oid(ino), "no dentry names it", fixed);
    }
    return Status::OK();
  }

  Status check_data() {
    auto objs = list_pool(data_);
    if (!objs.ok()) return objs.status();
    for (const auto &oid : *objs) {
      report_.data_objects++;
      auto ino = parse_data_oid(oid);
      if (ino && known_data_.count(*ino)) continue;
      bool fixed = false;
      if (repair_) {
        if (Status st = remove(data_, oid); !st.ok()) return st;
        fixed = true;
      }
      if (ino && inline_files_.count(*ino))
        problem("stale_data", oid,
                "inode " + hex16(*ino) + " keeps its data inline: the object is left over", fixed);
      else
        problem("orphan_data", oid, ino ? "no inode " + hex16(*ino) : "not a file data object",
                fixed);
    }
    return Status::OK();
  }

  client::ClusterClient &c_;
  uint32_t meta_, data_;
  bool repair_;
  FsCheckReport report_;
  std::map<Ino, std::set<std::string>> dir_objects_;
  std::set<Ino> inode_objects_;
  std::set<Ino> reached_dirs_;
  std::map<Ino, uint32_t> remote_names_;
  std::map<Ino, Place> primaries_;  // primary inode -> the dentry holding it
  std::set<Ino> known_data_;
  std::set<Ino> inline_files_;
};

}  // namespace

Result<FsCheckReport> fs_check(client::ClusterClient &cluster, uint32_t metadata_pool,
                               uint32_t data_pool, bool repair) {
  Checker c(cluster, metadata_pool, data_pool, repair);
  return c.run();
}

}  // namespace strata::mds
