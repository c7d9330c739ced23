/* FROZEN COPY of the Strata ABI 1.2 header, used by tests/abi to build
 * plugins the way a plugin author did before ABI 1.3 (placement
 * capabilities without a handle, no control slot, no op stride). NEVER EDIT
 * THIS FILE: the tests prove that binaries built against it keep working. */
/*
 * Strata plugin ABI — the part every plugin kind shares.
 *
 * A plugin is one shared object that exports exactly one symbol,
 * STRATA_PLUGIN_ENTRY_SYMBOL, a function returning a pointer to a static
 * strata_plugin_descriptor. The host checks the descriptor before it touches
 * anything else:
 *   - abi_major must equal the host's STRATA_ABI_MAJOR (a new major gets a new
 *     entry symbol, so old and new plugins can coexist on one search path);
 *   - abi_minor may be lower than the host's: structs are only ever appended
 *     to, and every struct starts with struct_size, so the host never reads a
 *     field the plugin did not know about. A plugin with a *higher* minor than
 *     the host is refused (it may rely on host services the host lacks).
 *
 * Rules that hold for every function in every vtable:
 *   - Plain C types only. No C++ types, no exceptions, no allocation crosses
 *     the boundary: the caller allocates buffers and passes their capacity,
 *     iteration is done with caller-supplied callbacks.
 *   - Results are int: 0 (or a non-negative count) on success, a negative
 *     errno on failure. When a strata_err* is given and the call fails, the
 *     callee writes a one-line message with context (which object, which
 *     file) into it.
 *   - Unknown operations or capabilities answer -EOPNOTSUPP.
 *
 * Models: SQLite's sqlite3_vfs/sqlite3_io_methods (versioned, append-only
 * vtables), libfuse's lowlevel ops (one table of function pointers per kind).
 */
#ifndef STRATA_PLUGIN_H
#define STRATA_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* History of the ABI. Bump STRATA_ABI_MINOR on every appended field and note
 * what was added; bump the major (and the entry symbol's suffix) only when a
 * layout changes incompatibly.
 *   1.0  descriptor, option specs, object-store, journal vtables.
 *   1.1  object store: stage_write/stage_release_unused and
 *        STRATA_OP_WRITE_STAGED (large writes bypass the journal);
 *        the placement kind (placement.h).
 *   1.2  object store: stage_release (drop one abandoned stage).
 */
#define STRATA_ABI_MAJOR 1
#define STRATA_ABI_MINOR 2

#define STRATA_PLUGIN_ENTRY_SYMBOL "strata_plugin_entry_v1"

#if defined(__GNUC__)
#define STRATA_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define STRATA_PLUGIN_EXPORT
#endif

typedef enum strata_plugin_kind {
  STRATA_KIND_OBJECTSTORE = 1, /* vtable: strata_objectstore_ops (objectstore.h) */
  STRATA_KIND_JOURNAL = 2,     /* vtable: strata_journal_ops (journal.h) */
  STRATA_KIND_PLACEMENT = 3,   /* vtable: strata_placement_ops (placement.h) */
  STRATA_KIND_FRONTEND = 4     /* reserved for the frontend kind (cluster issue) */
} strata_plugin_kind;

/* Error context filled by the callee on failure. Caller-allocated. */
typedef struct strata_err {
  char msg[512];
} strata_err;

/* A byte string that is not necessarily NUL-terminated. */
typedef struct strata_slice {
  const char *data;
  size_t len;
} strata_slice;

/* One configuration value handed to a plugin: already validated by the host
 * against the plugin's strata_option_spec list. */
typedef struct strata_kv {
  const char *key;
  const char *value;
} strata_kv;

typedef enum strata_option_type {
  STRATA_OPT_STRING = 1,
  STRATA_OPT_INT = 2,   /* decimal, optional K/M/G/T suffix (powers of 1024) */
  STRATA_OPT_BOOL = 3,  /* true/false/1/0/yes/no/on/off */
  STRATA_OPT_ENUM = 4   /* one of enum_values, '|'-separated */
} strata_option_type;

/* A configuration key a plugin understands. The host rejects keys in a
 * plugin's config section that no spec names, and values that do not parse. */
typedef struct strata_option_spec {
  const char *name;
  uint32_t type; /* strata_option_type */
  const char *default_value;
  const char *enum_values; /* STRATA_OPT_ENUM only, e.g. "rocksdb|leveldb" */
  const char *help;
} strata_option_spec;

typedef enum strata_log_level {
  STRATA_LOG_DEBUG = 0,
  STRATA_LOG_INFO = 1,
  STRATA_LOG_WARN = 2,
  STRATA_LOG_ERROR = 3
} strata_log_level;

/* Services the host offers a plugin. Host-allocated; valid until the object
 * it was passed with is closed. Check struct_size before using a field added
 * after 1.0. */
typedef struct strata_host_services {
  uint32_t struct_size;
  uint32_t reserved0;
  void *ctx;
  /* Thread-safe. msg is one line without a trailing newline. */
  void (*log)(void *ctx, int level, const char *msg);
  void *reserved[6];
} strata_host_services;

/* Arguments to every open/create call. Host-allocated; the plugin copies
 * what it keeps. */
typedef struct strata_open_args {
  uint32_t struct_size;
  uint32_t reserved0;
  const char *path;             /* directory or file the instance lives in */
  const strata_kv *options;     /* validated plugin options, defaults filled */
  size_t n_options;
  const strata_host_services *host;
  void *reserved[4];
} strata_open_args;

/* What the entry symbol returns: static storage, valid while the library is
 * loaded. */
typedef struct strata_plugin_descriptor {
  uint32_t struct_size;
  uint16_t abi_major;
  uint16_t abi_minor;
  uint32_t kind; /* strata_plugin_kind */
  uint32_t reserved0;
  const char *name;        /* e.g. "xfs"; unique per kind on a search path */
  const char *version;     /* the plugin's own version, e.g. "0.1.0" */
  const char *description; /* one line for `strata plugins list` */
  const void *ops;         /* kind-specific vtable; starts with uint32_t struct_size */
  const strata_option_spec *options; /* the config keys this plugin takes */
  size_t n_options;
  void *reserved[4];
} strata_plugin_descriptor;

typedef const strata_plugin_descriptor *(*strata_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_PLUGIN_H */
