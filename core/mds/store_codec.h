// Encodes the MDS's records into the bytes stored in the metadata pool
// (schema/mds_store.capnp) and decodes them back. Every decode checks what
// it reads: corrupt bytes give -EIO naming `what` (the object and key),
// never a crash.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "mds/meta_types.h"

namespace strata::mds {

// The journal head (omap header of mds.journal).
struct JournalHead {
  uint64_t head_segment = 0;
  uint64_t head_offset = 0;
  uint64_t tail_segment = 0;
  uint64_t applied_seq = 0;
};

// The filesystem header (omap header of mds.fsmeta).
struct FsMeta {
  uint32_t format_version = 1;
  Ino ino_next = kFirstUserIno;
};

std::string encode_inode(const InodeRec &in);
Result<InodeRec> decode_inode(std::string_view bytes, const std::string &what);

std::string encode_dentry(const DentryRec &d);
Result<DentryRec> decode_dentry(std::string_view bytes, const std::string &what);

// The fragment table of a directory (omap header of d.<ino>).
std::string encode_dir_header(uint8_t frag_bits);
Result<uint8_t> decode_dir_header(std::string_view bytes, const std::string &what);

std::string encode_fsmeta(const FsMeta &m);
Result<FsMeta> decode_fsmeta(std::string_view bytes, const std::string &what);

std::string encode_journal_head(const JournalHead &h);
Result<JournalHead> decode_journal_head(std::string_view bytes, const std::string &what);

std::string encode_session(const SessionRec &s);
Result<SessionRec> decode_session(std::string_view bytes, const std::string &what);

std::string encode_purge(const PurgeRec &p);
Result<PurgeRec> decode_purge(std::string_view bytes, const std::string &what);

std::string encode_update(const MetaUpdate &u);
Result<MetaUpdate> decode_update(std::string_view bytes, const std::string &what);

}  // namespace strata::mds
