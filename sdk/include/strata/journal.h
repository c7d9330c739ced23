/*
 * Strata journal-media plugin ABI (kind STRATA_KIND_JOURNAL).
 *
 * A journal is an append-only log of opaque records, each tagged with a
 * host-assigned sequence number (strictly increasing by one). The host writes
 * every transaction to the journal before the object store applies it, and
 * trims the journal once the object store has checkpointed.
 *
 * Contract:
 *   - append() queues a record and returns at once; on_durable is called
 *     (from a plugin thread) once the record and every record before it are
 *     durable on the medium, with rc 0, or a negative errno if the medium
 *     failed. Plugins should batch queued records into one device write
 *     (group commit).
 *   - append() blocks while the journal has no room for the record (it never
 *     fails for being full); trim() makes room. A record larger than the whole
 *     journal fails with -EFBIG.
 *   - replay() is called once after open and before the first append: it
 *     visits the records with seq > after_seq in order and stops at the end of
 *     the valid log. A torn or corrupt tail (the records written last, never
 *     acknowledged) is discarded and reported in the result. Corruption
 *     followed by valid later records means acknowledged data would be lost:
 *     replay fails with -EUCLEAN and a message naming the offset, and the
 *     journal refuses to append; stat() then reports in last_seq the newest
 *     seq found on the medium (where the records that cannot be replayed
 *     end), when the plugin knows it.
 *   - Sequence numbers: each append carries the previous append's seq + 1,
 *     except the first append after open (or into a new journal), which may
 *     carry any seq greater than every seq the journal ever held: the host
 *     continues from its object store's checkpoint, which may be ahead of a
 *     fully trimmed or newly swapped-in journal. replay() with nothing newer
 *     than after_seq reports last_seq = after_seq.
 *   - Records are checksummed (crc32c) and carry their seq; a record from an
 *     earlier lap of a circular log is never mistaken for a new one.
 *
 *   - An append whose seq breaks the order above fails with -EINVAL. A
 *     second open of a journal already open (in any process) fails with
 *     -EBUSY. trim(upto) may name a seq not yet appended; it then covers
 *     those records as they arrive. replay may have visited records before
 *     it fails with -EUCLEAN.
 *
 *   - Owner (ABI 1.3, STRATA_JOURNAL_CAP_OWNER_CHECK): create() records
 *     args->owner_id (and owner_path, for messages) in the journal when
 *     given. open() with an owner_id refuses a journal that records a
 *     different owner: -EXDEV, with a message naming the journal's path,
 *     both owner ids and both owner paths. A journal that records no owner
 *     (made before 1.3, or created without one) is adopted: open records
 *     the given owner, so that from then on it is checked. open() without
 *     an owner_id checks nothing.
 *
 * Threading: append, trim, flush, stat may be called from different host
 * threads concurrently; replay is called alone. control may be called
 * from any thread while the journal is open. on_durable callbacks must
 * not call flush or close.
 */
#ifndef STRATA_JOURNAL_H
#define STRATA_JOURNAL_H

#include "strata/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_journal strata_journal; /* opaque, plugin-owned */

/* Capability bits. */
/* The medium loses its content on power loss or reboot (tmpfs): an
 * acknowledged write survives a process crash but not a machine crash. The
 * host warns about it in every health report. */
#define STRATA_JOURNAL_CAP_VOLATILE (1ull << 0)
/* Durable writes bypass the page cache (O_DIRECT). Informational. */
#define STRATA_JOURNAL_CAP_DIRECT_IO (1ull << 1)
/* 1.3: the plugin records its owner at create and checks it at open (see
 * "Owner" above). Without it the host cannot rely on the journal to refuse
 * another store, and protects the data with its own checks only. */
#define STRATA_JOURNAL_CAP_OWNER_CHECK (1ull << 2)

typedef void (*strata_journal_done_cb)(void *arg, int rc);
/* Replay visitor, by the convention of plugin.h: return 0 to continue,
 * non-zero to stop, and replay returns that value (a negative errno aborts
 * replay as a failure). */
typedef int (*strata_journal_record_cb)(void *ctx, uint64_t seq, const void *data, size_t len);

typedef struct strata_journal_stat {
  uint32_t struct_size;
  uint32_t reserved0;
  uint64_t capacity_bytes;  /* usable bytes for records */
  uint64_t used_bytes;      /* bytes held by untrimmed records (incl. framing) */
  uint64_t first_seq;       /* oldest untrimmed record, 0 if empty */
  uint64_t last_seq;        /* newest appended record, 0 if none */
  uint64_t durable_seq;     /* newest record known durable */
  uint64_t device_writes;   /* count of medium writes (group commit ratio) */
  uint64_t records_written; /* records appended since open */
  uint64_t reserved[4];
} strata_journal_stat;

typedef struct strata_journal_replay_result {
  uint32_t struct_size;
  uint32_t reserved0;
  uint64_t records;        /* records visited */
  uint64_t last_seq;       /* seq of the last valid record (after_seq if none) */
  uint64_t torn_bytes;     /* bytes of an invalid tail that were discarded */
  char detail[256];        /* human-readable note on what was discarded, or "" */
} strata_journal_replay_result;

typedef struct strata_journal_ops {
  uint32_t struct_size;
  uint32_t reserved0;

  /* Create a new, empty journal at args->path with room for capacity bytes
   * (0 = the plugin's default or the whole block device). Overwrites any
   * journal already there. */
  int (*create)(const strata_open_args *args, uint64_t capacity, strata_err *err);
  int (*open)(const strata_open_args *args, strata_journal **out, strata_err *err);
  /* Waits for queued appends to be durable (their callbacks run) and frees
   * everything. Safe with NULL. */
  void (*close)(strata_journal *j);
  uint64_t (*capabilities)(strata_journal *j);

  int (*replay)(strata_journal *j, uint64_t after_seq, strata_journal_record_cb cb, void *ctx,
                strata_journal_replay_result *result, strata_err *err);
  int (*append)(strata_journal *j, uint64_t seq, const void *data, size_t len,
                strata_journal_done_cb on_durable, void *arg, strata_err *err);
  /* Records with seq <= upto_seq may be discarded; their space is reusable. */
  int (*trim)(strata_journal *j, uint64_t upto_seq, strata_err *err);
  /* Returns when every record appended before the call is durable. */
  int (*flush)(strata_journal *j, strata_err *err);
  int (*stat)(strata_journal *j, strata_journal_stat *out);
  /* Remove the journal's files (after a journal swap). */
  int (*destroy)(const strata_open_args *args, strata_err *err);

  /* --- ABI 1.3 ---------------------------------------------------------- */
  /* A request or hint that needs no slot of its own (plugin.h, "Control
   * calls"). No public journal op is defined yet: a plugin answers every op
   * it does not implement with -EOPNOTSUPP. Thread-safe like stat. May be
   * NULL: the host then answers -EOPNOTSUPP itself. */
  int (*control)(strata_journal *j, int op, void *arg, strata_err *err);
} strata_journal_ops;

#ifdef __cplusplus
}
#endif

#endif /* STRATA_JOURNAL_H */
