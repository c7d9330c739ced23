// Generated-corpus fuzzing, run by ctest: thousands of valid, mutated and
// random frames through FrameDecoder, and valid and mutated Cap'n Proto
// payloads of every struct in wire.capnp and handshake.capnp through the
// payload reader. Nothing may crash or throw; damage must be reported as
// an error. Deterministic (fixed seeds); set STRATA_FUZZ_SEED to explore.
// For open-ended fuzzing with Clang, see frame_fuzzer.cpp.
#include <catch2/catch.hpp>

#include <capnp/dynamic.h>
#include <capnp/schema-parser.h>
#include <kj/filesystem.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "msg/crc32c.h"
#include "msg/frame.h"
#include "msg/message_types.h"
#include "msg/schema/handshake.capnp.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"

using namespace strata::msg;
using strata::Status;
using Rng = std::mt19937_64;

namespace {

uint64_t base_seed() {
  const char *s = std::getenv("STRATA_FUZZ_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20240601;
}

std::string random_bytes(Rng &rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto &c : s) c = static_cast<char>(rng());
  return s;
}

Message random_message(Rng &rng) {
  Message m;
  m.type = static_cast<uint16_t>(rng() % 130);
  m.payload = random_bytes(rng, rng() % 4 == 0 ? 0 : rng() % 300);
  std::size_t nseg = rng() % 4 == 0 ? rng() % 6 : 0;
  for (std::size_t i = 0; i < nseg; ++i) m.segments.push_back(random_bytes(rng, rng() % 3 == 0 ? 0 : rng() % 2000));
  return m;
}

bool same(const Message &a, const Message &b) {
  return a.type == b.type && a.payload == b.payload && a.segments == b.segments;
}

struct DecodeResult {
  std::vector<Message> frames;
  bool error = false;
  bool mid_frame = false;  // input ended inside a frame
};

// Feeds `bytes` in random chunks, alternating copying feed() and in-place
// want()/commit(), the two ways the messenger uses the decoder.
DecodeResult decode(const std::string &bytes, Rng &rng, const FrameLimits &lim) {
  FrameDecoder dec(lim);
  DecodeResult r;
  std::size_t off = 0;
  while (off < bytes.size()) {
    std::size_t n = std::min<std::size_t>(bytes.size() - off, 1 + rng() % 700);
    if (rng() & 1) {
      auto used = dec.feed(bytes.data() + off, n);
      if (!used.ok()) {
        r.error = true;
        REQUIRE(!used.status().message().empty());
        return r;
      }
      off += used.value();
    } else {
      auto w = dec.want();
      REQUIRE(!w.empty());
      n = std::min(n, w.size());
      std::memcpy(w.data(), bytes.data() + off, n);
      off += n;
      Status s = dec.commit(n);
      if (!s.ok()) {
        r.error = true;
        REQUIRE(dec.failed());
        return r;
      }
    }
    if (dec.ready()) r.frames.push_back(dec.take());
  }
  r.mid_frame = !dec.at_frame_boundary();
  return r;
}

}  // namespace

TEST_CASE("fuzz: frame decoder on generated and mutated streams") {
  Rng rng(base_seed());
  const FrameLimits lim{1 << 12, 1 << 14, 8};
  int errors = 0, clean = 0, truncated = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::vector<Message> msgs;
    std::string stream;
    std::vector<std::size_t> ends;  // end offset of each frame
    for (int k = 1 + rng() % 3; k > 0; --k) {
      msgs.push_back(random_message(rng));
      stream += encode_frame(msgs.back());
      ends.push_back(stream.size());
    }
    std::size_t within_limits = 0;  // frames the limits let through, in order
    for (auto &m : msgs) {
      std::size_t data = 0;
      for (auto &s : m.segments) data += s.size();
      if (m.payload.size() > lim.max_payload || m.segments.size() > lim.max_segments ||
          data > lim.max_data)
        break;
      ++within_limits;
    }
    int kind = static_cast<int>(rng() % 7);
    std::string bytes = stream;
    std::size_t damaged_at = stream.size();  // first byte a mutation touched
    switch (kind) {
      case 0: break;  // intact
      case 1: {       // one bit flipped: every byte is under some crc
        std::size_t pos = rng() % bytes.size();
        bytes[pos] ^= static_cast<char>(1u << (rng() % 8));
        damaged_at = pos;
        break;
      }
      case 2: {       // a burst of random bytes overwritten
        std::size_t pos = rng() % bytes.size();
        std::size_t n = std::min<std::size_t>(1 + rng() % 16, bytes.size() - pos);
        std::string repl = random_bytes(rng, n);
        if (repl == bytes.substr(pos, n)) repl[0] ^= 1;
        bytes.replace(pos, n, repl);
        damaged_at = pos;
        break;
      }
      case 3: {       // truncated
        std::size_t cut = rng() % bytes.size();
        bytes.resize(cut);
        damaged_at = cut;
        break;
      }
      case 4: {       // random bytes inserted
        std::size_t pos = rng() % (bytes.size() + 1);
        bytes.insert(pos, random_bytes(rng, 1 + rng() % 40));
        damaged_at = pos;
        break;
      }
      case 5:         // pure noise
        bytes = random_bytes(rng, 1 + rng() % 3000);
        damaged_at = 0;
        break;
      case 6: {       // header fields rewritten and the header crc fixed up
        std::size_t field = 4 + 2 * (rng() % 12);  // any u16 of bytes 4..27
        bytes[field] = static_cast<char>(rng());
        bytes[field + 1] = static_cast<char>(rng());
        // Re-seal the header crc so the damage reaches the later checks.
        uint32_t c = crc32c(bytes.data(), 28);
        for (int i = 0; i < 4; ++i) bytes[28 + i] = static_cast<char>(c >> (8 * i));
        damaged_at = field;
        break;
      }
    }
    DecodeResult r = decode(bytes, rng, lim);
    // Frames wholly before the damage decode exactly as sent.
    std::size_t intact = 0;
    while (intact < ends.size() && ends[intact] <= damaged_at) ++intact;
    intact = std::min(intact, within_limits);
    REQUIRE(r.frames.size() >= intact);
    for (std::size_t i = 0; i < intact; ++i) REQUIRE(same(r.frames[i], msgs[i]));
    if (kind == 0 && within_limits == msgs.size()) {
      REQUIRE(!r.error);
      REQUIRE(r.frames.size() == msgs.size());
    }
    INFO("iteration " << iter << " kind " << kind << " damaged_at " << damaged_at << " of "
                      << bytes.size() << " frames " << msgs.size() << " decoded " << r.frames.size()
                      << " mid_frame " << r.mid_frame);
    if (kind == 1 && within_limits == msgs.size()) REQUIRE(r.error);  // crc catches every 1-bit flip
    if (kind == 3 && within_limits == msgs.size()) {
      REQUIRE(!r.error);
      REQUIRE(r.mid_frame == (damaged_at != 0 && std::find(ends.begin(), ends.end(), damaged_at) == ends.end()));
    }
    if (kind == 5 && bytes.size() >= 4) REQUIRE(r.error);  // no magic (odds 2^-32)
    errors += r.error;
    clean += !r.error && !r.mid_frame;
    truncated += r.mid_frame;
  }
  INFO("errors " << errors << " clean " << clean << " truncated " << truncated);
  CHECK(errors > 1000);
  CHECK(clean > 500);
}

namespace {

// ---------------------------------------------------------------------------
// Payloads: random instances of every struct, built with the dynamic API
// from the parsed schema files.

struct Schemas {
  kj::Own<kj::Filesystem> fs = kj::newDiskFilesystem();
  kj::Own<const kj::ReadableDirectory> include;
  const kj::ReadableDirectory *import_path[1];
  capnp::SchemaParser parser;
  std::vector<capnp::StructSchema> structs;

  Schemas() {
    include = fs->getRoot().openSubdir(kj::Path::parse(std::string(STRATA_CAPNP_INCLUDE_DIR).substr(1)));
    import_path[0] = include.get();
    for (const char *file : {"wire.capnp", "handshake.capnp"}) {
      std::string path = std::string(STRATA_MSG_SCHEMA_DIR).substr(1) + "/" + file;
      auto parsed = parser.parseFromDirectory(fs->getRoot(), kj::Path::parse(path), import_path);
      collect(parsed);
    }
  }
  void collect(capnp::ParsedSchema node) {
    for (auto nested : node.getProto().getNestedNodes()) {
      auto child = node.getNested(nested.getName());
      if (child.getProto().isStruct()) {
        structs.push_back(child.asStruct());
        collect(child);
      }
    }
  }
};

void fill_struct(capnp::DynamicStruct::Builder b, Rng &rng, int depth);

// A random value of a non-struct, non-list type, or false. `keep` backs
// Text and Data values until they are set.
bool random_scalar(capnp::Type t, Rng &rng, std::string &keep, capnp::DynamicValue::Reader &out) {
  using W = capnp::schema::Type;
  switch (t.which()) {
    case W::BOOL: out = static_cast<bool>(rng() & 1); return true;
    case W::INT8: out = static_cast<int64_t>(static_cast<int8_t>(rng())); return true;
    case W::INT16: out = static_cast<int64_t>(static_cast<int16_t>(rng())); return true;
    case W::INT32: out = static_cast<int64_t>(static_cast<int32_t>(rng())); return true;
    case W::INT64: out = static_cast<int64_t>(rng()); return true;
    case W::UINT8: out = static_cast<uint64_t>(static_cast<uint8_t>(rng())); return true;
    case W::UINT16: out = static_cast<uint64_t>(static_cast<uint16_t>(rng())); return true;
    case W::UINT32: out = static_cast<uint64_t>(static_cast<uint32_t>(rng())); return true;
    case W::UINT64: out = static_cast<uint64_t>(rng()); return true;
    case W::FLOAT32:
    case W::FLOAT64: out = static_cast<double>(rng() % 100000) / 7.0; return true;
    case W::TEXT:
      keep.clear();
      for (std::size_t n = rng() % 24; n > 0; --n) keep += static_cast<char>('a' + rng() % 26);
      out = capnp::Text::Reader(keep.c_str(), keep.size());
      return true;
    case W::DATA:
      keep = random_bytes(rng, rng() % 64);
      out = capnp::Data::Reader(reinterpret_cast<const kj::byte *>(keep.data()), keep.size());
      return true;
    case W::ENUM: {
      auto es = t.asEnum().getEnumerants();
      out = capnp::DynamicEnum(es[rng() % es.size()]);
      return true;
    }
    default: return false;
  }
}

void fill_list(capnp::DynamicList::Builder l, capnp::Type elem, Rng &rng, int depth) {
  using W = capnp::schema::Type;
  std::string keep;
  for (unsigned i = 0; i < l.size(); ++i) {
    capnp::DynamicValue::Reader v;
    if (random_scalar(elem, rng, keep, v)) {
      l.set(i, v);
    } else if (elem.which() == W::STRUCT) {
      fill_struct(l[i].as<capnp::DynamicStruct>(), rng, depth + 1);
    } else if (elem.which() == W::LIST && depth < 4) {
      fill_list(l.init(i, rng() % 4).as<capnp::DynamicList>(), elem.asList().getElementType(), rng, depth + 1);
    }
  }
}

void fill_field(capnp::DynamicStruct::Builder b, capnp::StructSchema::Field f, Rng &rng, int depth) {
  using W = capnp::schema::Type;
  if (f.getProto().isGroup()) {
    fill_struct(b.init(f).as<capnp::DynamicStruct>(), rng, depth);
    return;
  }
  if (rng() % 5 == 0) return;  // leave some fields at their defaults
  auto t = f.getType();
  std::string keep;
  capnp::DynamicValue::Reader v;
  if (random_scalar(t, rng, keep, v)) {
    b.set(f, v);
  } else if (t.which() == W::STRUCT && depth < 4) {
    fill_struct(b.init(f).as<capnp::DynamicStruct>(), rng, depth + 1);
  } else if (t.which() == W::LIST && depth < 4) {
    fill_list(b.init(f, rng() % 5).as<capnp::DynamicList>(), t.asList().getElementType(), rng, depth + 1);
  }
}

void fill_struct(capnp::DynamicStruct::Builder b, Rng &rng, int depth) {
  auto schema = b.getSchema();
  for (auto f : schema.getNonUnionFields()) fill_field(b, f, rng, depth);
  auto u = schema.getUnionFields();
  if (u.size() > 0) fill_field(b, u[rng() % u.size()], rng, depth);
}

std::string random_payload(capnp::StructSchema s, Rng &rng) {
  capnp::MallocMessageBuilder b;
  fill_struct(b.initRoot<capnp::DynamicStruct>(s), rng, 0);
  return to_payload(b);
}

// Reads `payload` as `s` through PayloadReader's checks and walks every
// field (stringifying visits everything). Returns false on a reported error.
bool read_dynamic(const std::string &payload, capnp::StructSchema s) {
  auto opened = PayloadReader::open(payload);
  if (!opened.ok()) {
    REQUIRE(opened.status().code() == -EBADMSG);
    return false;
  }
  // Same limits as PayloadReader, over our own aligned copy: the dynamic
  // root needs the schema, which PayloadReader's typed root() does not take.
  auto words = kj::heapArray<capnp::word>(payload.size() / 8);
  std::memcpy(words.begin(), payload.data(), payload.size());
  capnp::ReaderOptions opts;
  opts.traversalLimitInWords = 8 * words.size() + 1024;
  opts.nestingLimit = 64;
  try {
    capnp::FlatArrayMessageReader reader(words.asPtr(), opts);
    auto text = kj::str(reader.getRoot<capnp::DynamicStruct>(s));
    return text.size() > 0;
  } catch (const kj::Exception &) {
    return false;
  }
}

// The typed path handlers use: read_message<T> + a full walk.
template <class T>
bool read_typed(const std::string &payload) {
  Message m;
  m.type = 99;
  m.payload = payload;
  Status s = read_message<T>(m, "fuzz", [](typename T::Reader r) {
    (void)r.toString();
    return Status::OK();
  });
  if (!s.ok()) REQUIRE(s.code() == -EBADMSG);
  return s.ok();
}

template <class... T>
int read_all_typed(const std::string &payload) {
  return (0 + ... + static_cast<int>(read_typed<T>(payload)));
}

int read_as_every_message_type(const std::string &payload) {
  namespace w = strata::wire;
  return read_all_typed<w::MonSubscribe, w::MapUpdate, w::AuthUpdate, w::OsdBoot, w::OsdFailure,
                        w::MonCommand, w::MonCommandReply, w::OsdStats, w::OpRequest, w::OpReply,
                        w::PgListRequest, w::PgListReply, w::PgCommand, w::PgCommandReply,
                        w::Heartbeat, hs::AuthChallenge, hs::AuthRequest, hs::AuthReply,
                        hs::AuthError>(payload);
}

std::string mutate(std::string p, Rng &rng, int kind) {
  switch (kind) {
    case 0: {  // bit flips
      for (int n = 1 + rng() % 4; n > 0; --n) p[rng() % p.size()] ^= static_cast<char>(1u << (rng() % 8));
      return p;
    }
    case 1: {  // a random word overwritten (pointers, sizes, tags)
      std::size_t w = rng() % (p.size() / 8);
      uint64_t v = rng();
      if (rng() & 1) v &= 0xffffffffull | (0xffull << 32);  // plausible small offsets
      std::memcpy(&p[8 * w], &v, 8);
      return p;
    }
    case 2:  // truncated to a shorter whole number of words
      p.resize(8 * (rng() % (p.size() / 8)));
      return p;
    case 3:  // odd size
      p.resize(p.size() - 1 - rng() % std::min<std::size_t>(p.size(), 7));
      return p;
    default:  // noise of the same size
      return random_bytes(rng, p.size());
  }
}

}  // namespace

TEST_CASE("fuzz: every wire.capnp struct, valid and mutated payloads") {
  Schemas schemas;
  REQUIRE(schemas.structs.size() >= 28);  // wire.capnp + handshake.capnp today
  Rng rng(base_seed() + 1);
  int valid = 0, mutated = 0, mutated_errors = 0;
  for (auto s : schemas.structs) {
    INFO("struct " << s.getShortDisplayName().cStr());
    for (int i = 0; i < 60; ++i) {
      std::string p = random_payload(s, rng);
      REQUIRE(read_dynamic(p, s));  // a valid message always reads
      ++valid;
      for (int kind = 0; kind < 5; ++kind) {
        std::string bad = mutate(p, rng, kind);
        bool ok = read_dynamic(bad, s);
        if (kind == 2 || kind == 3) REQUIRE(!ok);  // truncation is always caught
        ++mutated;
        mutated_errors += !ok;
        // Type confusion: the same bytes as every message type.
        if (i % 6 == 0) read_as_every_message_type(bad);
      }
      if (i % 6 == 0) read_as_every_message_type(p);
    }
  }
  INFO("valid " << valid << " mutated " << mutated << " errors " << mutated_errors);
  CHECK(mutated_errors > mutated / 3);
}

TEST_CASE("fuzz: random bytes as every message type") {
  Rng rng(base_seed() + 2);
  for (int i = 0; i < 2000; ++i) {
    std::string p = random_bytes(rng, 8 * (rng() % 40));
    // Plausible segment tables make the reader go further.
    if (p.size() >= 8 && (rng() & 1)) {
      uint32_t zero = 0, words = static_cast<uint32_t>(p.size() / 8 - 1);
      std::memcpy(&p[0], &zero, 4);
      std::memcpy(&p[4], &words, 4);
    }
    read_as_every_message_type(p);
  }
}
