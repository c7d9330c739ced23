// encode/decode of whole maps and incrementals (cluster_map.h, map_wire.h).
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "cluster/map_wire.h"
#include "placement/binary_format.h"

namespace strata::cluster {

namespace {

std::string placement_bytes(const placement::PlacementMap &p) {
  // An empty map (no types at all) travels as no bytes: it would not pass
  // validation, and it is what a map that never had a placement looks like.
  if (p == placement::PlacementMap{}) return {};
  return placement::encode_binary(p);
}

Result<placement::PlacementMap> placement_from(capnp::Data::Reader d) {
  if (d.size() == 0) return placement::PlacementMap{};
  auto r = placement::decode_binary(
      std::string_view(reinterpret_cast<const char *>(d.begin()), d.size()));
  if (!r.ok()) return r.status().Context("placement map in cluster map");
  return r;
}

std::string text(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }

capnp::Data::Reader as_data(const std::string &s) {
  return capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(s.data()), s.size());
}

std::string flat(capnp::MessageBuilder &b) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(b);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char *>(bytes.begin()), bytes.size());
}

// Reads bytes (any alignment) as a message with root T and runs fn on the
// root; Cap'n Proto exceptions become EBADMSG naming `what`.
template <class T, class Fn>
auto read_flat(std::string_view bytes, const char *what, Fn &&fn)
    -> decltype(fn(std::declval<typename T::Reader>())) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0)
    return Status::Error(EBADMSG, std::string(what) + ": " + std::to_string(bytes.size()) +
                                      " bytes is not a whole number of words");
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), bytes.size());
  try {
    capnp::ReaderOptions opts;
    opts.traversalLimitInWords = 64u << 20;  // maps are small; this bounds a bad one
    capnp::FlatArrayMessageReader reader(words, opts);
    return fn(reader.getRoot<T>());
  } catch (const kj::Exception &e) {
    return Status::Error(EBADMSG, std::string(what) + ": malformed: " + e.getDescription().cStr());
  }
}

}  // namespace

void to_wire(const OsdInfo &o, wire::OsdInfo::Builder out) {
  out.setId(o.id);
  out.setAddr(o.addr);
  out.setUp(o.up);
  out.setIn(o.in);
  out.setWeight(o.weight);
  out.setUpFrom(o.up_from);
  out.setDownAt(o.down_at);
  out.setHost(o.host);
  out.setDownSinceMs(o.down_since_ms);
  out.setFullness(static_cast<uint8_t>(o.fullness));
}

OsdInfo from_wire(wire::OsdInfo::Reader in) {
  OsdInfo o;
  o.id = in.getId();
  o.addr = text(in.getAddr());
  o.up = in.getUp();
  o.in = in.getIn();
  o.weight = in.getWeight();
  o.up_from = in.getUpFrom();
  o.down_at = in.getDownAt();
  o.host = text(in.getHost());
  o.down_since_ms = in.getDownSinceMs();
  o.fullness = static_cast<Fullness>(std::min<uint8_t>(in.getFullness(), uint8_t(Fullness::kFull)));
  return o;
}

void to_wire(const PoolInfo &p, wire::PoolInfo::Builder out) {
  out.setId(p.id);
  out.setName(p.name);
  out.setSize(p.size);
  out.setMinSize(p.min_size);
  out.setPgNum(p.pg_num);
  out.setRule(p.rule);
}

PoolInfo from_wire(wire::PoolInfo::Reader in) {
  PoolInfo p;
  p.id = in.getId();
  p.name = text(in.getName());
  p.size = in.getSize();
  p.min_size = in.getMinSize();
  p.pg_num = in.getPgNum();
  p.rule = in.getRule();
  return p;
}

void to_wire(const FsInfo &f, wire::FsInfo::Builder out) {
  out.setId(f.id);
  out.setName(f.name);
  out.setMetadataPool(f.metadata_pool);
  out.setDataPool(f.data_pool);
  out.setCreatedEpoch(f.created_epoch);
}

FsInfo from_wire(wire::FsInfo::Reader in) {
  FsInfo f;
  f.id = in.getId();
  f.name = text(in.getName());
  f.metadata_pool = in.getMetadataPool();
  f.data_pool = in.getDataPool();
  f.created_epoch = in.getCreatedEpoch();
  return f;
}

void to_wire(const MdsInfo &d, wire::MdsInfo::Builder out) {
  out.setName(d.name);
  out.setAddr(d.addr);
  out.setState(static_cast<uint8_t>(d.state));
  out.setFsId(d.fs_id);
  out.setIncarnation(d.incarnation);
  out.setUpFrom(d.up_from);
}

MdsInfo from_wire(wire::MdsInfo::Reader in) {
  MdsInfo d;
  d.name = text(in.getName());
  d.addr = text(in.getAddr());
  // An unknown state (a newer peer) reads as standby: serving nothing is
  // the safe reading.
  uint8_t st = in.getState();
  d.state = st <= uint8_t(MdsState::kActive) ? static_cast<MdsState>(st) : MdsState::kStandby;
  d.fs_id = in.getFsId();
  d.incarnation = in.getIncarnation();
  d.up_from = in.getUpFrom();
  return d;
}

void to_wire(const ClusterMap &m, wire::ClusterMap::Builder out) {
  out.setEpoch(m.epoch);
  out.setFsid(m.fsid);
  auto osds = out.initOsds(unsigned(m.osds.size()));
  unsigned i = 0;
  for (const auto &[id, o] : m.osds) to_wire(o, osds[i++]);
  auto pools = out.initPools(unsigned(m.pools.size()));
  i = 0;
  for (const auto &[id, p] : m.pools) to_wire(p, pools[i++]);
  out.setPlacementPlugin(m.placement_plugin);
  out.setPlacementMap(as_data(placement_bytes(m.placement)));
  out.setCreatedMs(m.created_ms);
  out.setModifiedMs(m.modified_ms);
  out.setPoolMax(m.pool_max);
  auto fss = out.initFilesystems(unsigned(m.filesystems.size()));
  i = 0;
  for (const auto &[id, f] : m.filesystems) to_wire(f, fss[i++]);
  auto mdss = out.initMds(unsigned(m.mds.size()));
  i = 0;
  for (const auto &[name, d] : m.mds) to_wire(d, mdss[i++]);
  out.setFsMax(m.fs_max);
}

Result<ClusterMap> from_wire(wire::ClusterMap::Reader in) {
  ClusterMap m;
  m.epoch = in.getEpoch();
  m.fsid = text(in.getFsid());
  for (auto o : in.getOsds()) {
    OsdInfo info = from_wire(o);
    m.osds[info.id] = std::move(info);
  }
  for (auto p : in.getPools()) {
    PoolInfo info = from_wire(p);
    m.pools[info.id] = std::move(info);
  }
  m.placement_plugin = text(in.getPlacementPlugin());
  auto pm = placement_from(in.getPlacementMap());
  if (!pm.ok()) return pm.status().Context("map epoch " + std::to_string(m.epoch));
  m.placement = std::move(*pm);
  m.created_ms = in.getCreatedMs();
  m.modified_ms = in.getModifiedMs();
  m.pool_max = in.getPoolMax();
  for (auto f : in.getFilesystems()) {
    FsInfo info = from_wire(f);
    m.filesystems[info.id] = std::move(info);
  }
  for (auto d : in.getMds()) {
    MdsInfo info = from_wire(d);
    m.mds[info.name] = std::move(info);
  }
  m.fs_max = in.getFsMax();
  return m;
}

namespace {

// Changed/removed entries of one keyed map of the cluster map.
template <class K, class V>
void diff_entries(const std::map<K, V> &from, const std::map<K, V> &to,
                  std::vector<const V *> &changed, std::vector<K> &removed) {
  for (const auto &[k, v] : to) {
    auto it = from.find(k);
    if (it == from.end() || !(it->second == v)) changed.push_back(&v);
  }
  for (const auto &[k, v] : from)
    if (!to.count(k)) removed.push_back(k);
}

void fs_incremental_to_wire(const ClusterMap &from, const ClusterMap &to,
                            wire::MapIncremental::Builder out) {
  std::vector<const FsInfo *> changed_fs;
  std::vector<uint32_t> removed_fs;
  diff_entries(from.filesystems, to.filesystems, changed_fs, removed_fs);
  std::vector<const MdsInfo *> changed_mds;
  std::vector<std::string> removed_mds;
  diff_entries(from.mds, to.mds, changed_mds, removed_mds);
  if (!changed_fs.empty()) {
    auto l = out.initFilesystems(unsigned(changed_fs.size()));
    for (unsigned i = 0; i < changed_fs.size(); ++i) to_wire(*changed_fs[i], l[i]);
  }
  if (!removed_fs.empty()) {
    auto l = out.initRemovedFilesystems(unsigned(removed_fs.size()));
    for (unsigned i = 0; i < removed_fs.size(); ++i) l.set(i, removed_fs[i]);
  }
  if (!changed_mds.empty()) {
    auto l = out.initMds(unsigned(changed_mds.size()));
    for (unsigned i = 0; i < changed_mds.size(); ++i) to_wire(*changed_mds[i], l[i]);
  }
  if (!removed_mds.empty()) {
    auto l = out.initRemovedMds(unsigned(removed_mds.size()));
    for (unsigned i = 0; i < removed_mds.size(); ++i) l.set(i, removed_mds[i]);
  }
  if (to.fs_max != from.fs_max) out.setFsMax(to.fs_max);
}

}  // namespace

void incremental_to_wire(const ClusterMap &from, const ClusterMap &to,
                         wire::MapIncremental::Builder out) {
  out.setEpoch(to.epoch);
  out.setModifiedMs(to.modified_ms);
  std::vector<const OsdInfo *> changed_osds;
  std::vector<int32_t> removed_osds;
  for (const auto &[id, o] : to.osds) {
    const OsdInfo *old = from.osd(id);
    if (!old || !(*old == o)) changed_osds.push_back(&o);
  }
  for (const auto &[id, o] : from.osds)
    if (!to.osd(id)) removed_osds.push_back(id);
  std::vector<const PoolInfo *> changed_pools;
  std::vector<uint32_t> removed_pools;
  for (const auto &[id, p] : to.pools) {
    const PoolInfo *old = from.pool(id);
    if (!old || !(*old == p)) changed_pools.push_back(&p);
  }
  for (const auto &[id, p] : from.pools)
    if (!to.pool(id)) removed_pools.push_back(id);

  auto osds = out.initOsds(unsigned(changed_osds.size()));
  for (unsigned i = 0; i < changed_osds.size(); ++i) to_wire(*changed_osds[i], osds[i]);
  auto rosds = out.initRemovedOsds(unsigned(removed_osds.size()));
  for (unsigned i = 0; i < removed_osds.size(); ++i) rosds.set(i, removed_osds[i]);
  auto pools = out.initPools(unsigned(changed_pools.size()));
  for (unsigned i = 0; i < changed_pools.size(); ++i) to_wire(*changed_pools[i], pools[i]);
  auto rpools = out.initRemovedPools(unsigned(removed_pools.size()));
  for (unsigned i = 0; i < removed_pools.size(); ++i) rpools.set(i, removed_pools[i]);
  // A placement map that went back to empty cannot be told apart from
  // "unchanged"; the monitor never empties a map once it has one.
  if (!(from.placement == to.placement))
    out.setPlacementMap(as_data(placement_bytes(to.placement)));
  if (to.pool_max != from.pool_max) out.setPoolMax(to.pool_max);
  fs_incremental_to_wire(from, to, out);
}

Result<ClusterMap> apply_incremental(const ClusterMap &from, wire::MapIncremental::Reader inc) {
  if (inc.getEpoch() != from.epoch + 1)
    return Status::Error(EINVAL, "incremental for epoch " + std::to_string(inc.getEpoch()) +
                                     " cannot apply to map epoch " + std::to_string(from.epoch));
  ClusterMap m = from;
  m.epoch = inc.getEpoch();
  m.modified_ms = inc.getModifiedMs();
  for (auto o : inc.getOsds()) {
    OsdInfo info = from_wire(o);
    m.osds[info.id] = std::move(info);
  }
  for (int32_t id : inc.getRemovedOsds()) m.osds.erase(id);
  for (auto p : inc.getPools()) {
    PoolInfo info = from_wire(p);
    m.pools[info.id] = std::move(info);
  }
  for (uint32_t id : inc.getRemovedPools()) m.pools.erase(id);
  m.pool_max = std::max(m.pool_max, inc.getPoolMax());
  for (auto f : inc.getFilesystems()) {
    FsInfo info = from_wire(f);
    m.filesystems[info.id] = std::move(info);
  }
  for (uint32_t id : inc.getRemovedFilesystems()) m.filesystems.erase(id);
  for (auto d : inc.getMds()) {
    MdsInfo info = from_wire(d);
    m.mds[info.name] = std::move(info);
  }
  for (auto name : inc.getRemovedMds()) m.mds.erase(text(name));
  m.fs_max = std::max(m.fs_max, inc.getFsMax());
  if (inc.getPlacementMap().size() > 0) {
    auto pm = placement_from(inc.getPlacementMap());
    if (!pm.ok()) return pm.status().Context("incremental epoch " + std::to_string(m.epoch));
    m.placement = std::move(*pm);
  }
  return m;
}

std::string encode_map(const ClusterMap &m) {
  capnp::MallocMessageBuilder b;
  to_wire(m, b.initRoot<wire::ClusterMap>());
  return flat(b);
}

Result<ClusterMap> decode_map(std::string_view bytes) {
  return read_flat<wire::ClusterMap>(bytes, "cluster map",
                                     [](wire::ClusterMap::Reader r) { return from_wire(r); });
}

std::string encode_incremental(const ClusterMap &from, const ClusterMap &to) {
  capnp::MallocMessageBuilder b;
  incremental_to_wire(from, to, b.initRoot<wire::MapIncremental>());
  return flat(b);
}

Result<ClusterMap> apply_incremental(const ClusterMap &from, std::string_view incremental) {
  return read_flat<wire::MapIncremental>(
      incremental, "map incremental",
      [&](wire::MapIncremental::Reader r) { return apply_incremental(from, r); });
}

}  // namespace strata::cluster
