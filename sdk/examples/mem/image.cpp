// Image layout (all integers little-endian u64, strings as length + bytes):
//   "STRMEM01" seq n_collections
//     { name n_objects
//       { name size n_pages { index page-bytes } n_xattrs { name value }
//         n_omap { key value } header } }
//   fnv1a64(everything before)
#include "image.h"

#include <cerrno>
#include <cstring>

#include "file_io.h"
#include "strata/cpp/plugin_support.hpp"

namespace mem {

using strata::sdk::Error;

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'M', 'E', 'M', '0', '1'};

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class Encoder {
 public:
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_ += static_cast<char>(v >> (8 * i));
  }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void raw(std::string_view s) { out_.append(s); }
  std::string &bytes() { return out_; }

 private:
  std::string out_;
};

// Reads what Encoder wrote; any overrun means a damaged image.
class Decoder {
 public:
  Decoder(std::string_view in, const std::string &file) : in_(in), file_(file) {}
  uint64_t u64() {
    std::string_view b = take(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(b[i])) << (8 * i);
    return v;
  }
  std::string str() { return std::string(take(u64())); }
  std::string_view take(uint64_t n) {
    if (n > in_.size() - pos_) throw Error(EUCLEAN, "image " + file_ + " is truncated");
    std::string_view v = in_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  const std::string &file_;
};

void encode_object(Encoder &e, const Object &o) {
  e.u64(o.data.size());
  e.u64(o.data.pages().size());
  for (const auto &[index, page] : o.data.pages()) {
    e.u64(index);
    e.raw(page);
  }
  e.u64(o.xattrs.size());
  for (const auto &[k, v] : o.xattrs) {
    e.str(k);
    e.str(v);
  }
  e.u64(o.omap.size());
  for (const auto &[k, v] : o.omap) {
    e.str(k);
    e.str(v);
  }
  e.str(o.omap_header);
}

Object decode_object(Decoder &d) {
  Object o;
  uint64_t size = d.u64();
  std::map<uint64_t, std::string> pages;
  for (uint64_t n = d.u64(); n > 0; --n) {
    uint64_t index = d.u64();
    pages.emplace(index, std::string(d.take(SparseData::kPageSize)));
  }
  o.data.restore(size, std::move(pages));
  for (uint64_t n = d.u64(); n > 0; --n) {
    std::string k = d.str();
    o.xattrs.emplace(std::move(k), d.str());
  }
  for (uint64_t n = d.u64(); n > 0; --n) {
    std::string k = d.str();
    o.omap.emplace(std::move(k), d.str());
  }
  o.omap_header = d.str();
  return o;
}

}  // namespace

void save_image(const std::string &dir, const StoreContent &content, uint64_t seq) {
  Encoder e;
  e.raw(std::string_view(kMagic, sizeof kMagic));
  e.u64(seq);
  e.u64(content.collections.size());
  for (const auto &[cname, coll] : content.collections) {
    e.str(cname);
    e.u64(coll.size());
    for (const auto &[oname, obj] : coll) {
      e.str(oname);
      encode_object(e, obj);
    }
  }
  e.u64(fnv1a64(e.bytes()));

  std::string tmp = dir + "/" + kImageName + ".tmp";
  write_file_durably(tmp, e.bytes());
  std::string final_path = dir + "/" + kImageName;
  if (::rename(tmp.c_str(), final_path.c_str()) != 0)
    throw strata::sdk::make_error(errno, "cannot rename %s: %s", tmp.c_str(), strerror(errno));
  sync_directory(dir);
}

void load_image(const std::string &dir, StoreContent *content, uint64_t *seq) {
  std::string file = dir + "/" + kImageName;
  std::string bytes = read_file(file);
  if (bytes.size() < sizeof kMagic + 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw Error(EUCLEAN, "image " + file + " is not a mem store image");
  std::string_view body(bytes.data(), bytes.size() - 8);
  Decoder tail(std::string_view(bytes).substr(body.size()), file);
  if (tail.u64() != fnv1a64(body)) throw Error(EUCLEAN, "image " + file + " fails its checksum");

  Decoder d(body, file);
  d.take(sizeof kMagic);
  StoreContent loaded;
  *seq = d.u64();
  for (uint64_t nc = d.u64(); nc > 0; --nc) {
    Collection &coll = loaded.collections[d.str()];
    for (uint64_t no = d.u64(); no > 0; --no) {
      std::string name = d.str();
      coll.emplace(std::move(name), decode_object(d));
    }
  }
  if (!d.done()) throw Error(EUCLEAN, "image " + file + " has trailing bytes");
  *content = std::move(loaded);
}

}  // namespace mem
