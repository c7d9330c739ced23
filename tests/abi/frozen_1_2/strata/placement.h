/* FROZEN COPY of the Strata ABI 1.2 header, used by tests/abi to build
 * plugins the way a plugin author did before ABI 1.3 (placement
 * capabilities without a handle, no control slot, no op stride). NEVER EDIT
 * THIS FILE: the tests prove that binaries built against it keep working. */
/*
 * Strata placement plugin ABI (kind STRATA_KIND_PLACEMENT), added in ABI 1.1.
 *
 * A placement plugin answers one question, for every client and daemon
 * alike and with no lookup service: which devices hold the data of input x?
 *
 * Data model. The host compiles its cluster map into the plain C structures
 * below and hands them to create(); the plugin copies what it needs into its
 * own state (the arrays are only valid during the call). The map is:
 *   - types: names for the levels of the hierarchy; type 0 is the device;
 *   - devices: id >= 0, a capacity weight, an optional class (e.g. "ssd"),
 *     and a reweight in [0, 1]: the probability that data landing on the
 *     device stays there (0 = the device is out);
 *   - buckets: id < 0, a type > 0 (host, rack, root ...), children that are
 *     devices or buckets, each with the weight of its whole subtree. The
 *     buckets form a forest: every item has at most one parent;
 *   - rules: step lists. TAKE a bucket (optionally only devices of a class),
 *     CHOOSE n items of a type, or CHOOSELEAF n distinct items of a type and
 *     one device under each (the failure domains), EMIT the chosen items.
 * Weights and reweights are 16.16 fixed point (STRATA_PLACEMENT_WEIGHT_ONE is
 * 1.0), so every machine sees the same numbers.
 *
 * Contract of map(). For the same map, rule, x and num_rep, every call on
 * every machine returns the same ordered list of devices (first = primary):
 * plugins must be deterministic to the bit (no unordered containers in the
 * decision, no libm transcendental functions whose last bit may differ
 * between C libraries, no -ffast-math). Devices in one result are distinct,
 * and the items chosen by one CHOOSE/CHOOSELEAF step are distinct.
 *
 * Threading. create/destroy: one call at a time per handle. map(): any
 * number of threads concurrently on one handle; it allocates nothing that
 * crosses the boundary and writes only into the caller's buffer.
 *
 * Evolution. Every array element type has its element size passed in the
 * map (device_size, ...), so fields can be appended to elements as well as
 * to the map and the vtable; a plugin reads only what it knows.
 */
#ifndef STRATA_PLACEMENT_H
#define STRATA_PLACEMENT_H

#include "strata/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_placement strata_placement; /* opaque, plugin-owned */

/* 16.16 fixed point: 1.0 is 0x10000. */
#define STRATA_PLACEMENT_WEIGHT_ONE 0x10000u

/* Upper bound on num_rep and on the length of one result. */
#define STRATA_PLACEMENT_MAX_RESULT 64

/* Capability bits (strata_placement_ops.capabilities). */
/* TAKE steps restricted to a device class are honoured. */
#define STRATA_PLACEMENT_CAP_DEVICE_CLASSES (1ull << 0)
/* Device reweights below 1.0 shed that share of the device's data. */
#define STRATA_PLACEMENT_CAP_REWEIGHT (1ull << 1)
/* Several CHOOSE steps in a row (e.g. 2 racks, then 2 hosts in each). */
#define STRATA_PLACEMENT_CAP_CHAINED_CHOOSE (1ull << 2)
/* Several TAKE .. EMIT blocks in one rule (e.g. 1 ssd + 2 hdd). */
#define STRATA_PLACEMENT_CAP_MULTI_TAKE (1ull << 3)

/* Bucket algorithm hints. A plugin uses its own algorithm; the hint records
 * what the map's author asked for. */
#define STRATA_PLACEMENT_ALG_STRAW2 1u

typedef struct strata_placement_type {
  uint32_t id; /* 0 = device; buckets use ids > 0 */
  uint32_t reserved0;
  const char *name; /* "host", "rack", ... */
} strata_placement_type;

typedef struct strata_placement_device {
  int32_t id;          /* >= 0, unique */
  int32_t class_index; /* index into class_names, or -1 for no class */
  uint32_t weight;     /* 16.16 capacity weight; 0 = holds nothing */
  uint32_t reweight;   /* 16.16 in [0, 1.0]; 0 = out */
} strata_placement_device;

typedef struct strata_placement_bucket {
  int32_t id;    /* < 0, unique */
  uint32_t type; /* a type id > 0 */
  uint32_t alg;  /* STRATA_PLACEMENT_ALG_* hint */
  uint32_t n_items;
  const int32_t *items;         /* children: devices (>= 0) or buckets (< 0) */
  const uint32_t *item_weights; /* 16.16, parallel to items: the weight of
                                   each child's whole subtree */
} strata_placement_bucket;

typedef enum strata_placement_step_op {
  /* arg1 = bucket id; arg2 = class index, or -1 for every device. */
  STRATA_PLACEMENT_STEP_TAKE = 1,
  /* arg1 = count n: > 0 exactly n, <= 0 means num_rep + n;
   * arg2 = the type of the items to choose (0 = devices). */
  STRATA_PLACEMENT_STEP_CHOOSE_FIRSTN = 2,
  /* As CHOOSE_FIRSTN, then one device under each chosen item; the devices
   * replace the items in the working set. */
  STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN = 3,
  /* Append the working set to the result and start over. */
  STRATA_PLACEMENT_STEP_EMIT = 4
} strata_placement_step_op;

typedef struct strata_placement_step {
  uint32_t op; /* strata_placement_step_op */
  int32_t arg1;
  int32_t arg2;
  uint32_t reserved0;
} strata_placement_step;

typedef struct strata_placement_rule {
  uint32_t id; /* unique; what map() is asked for */
  uint32_t n_steps;
  const strata_placement_step *steps; /* n_steps elements of step_size bytes */
  const char *name;
} strata_placement_rule;

typedef struct strata_placement_map {
  uint32_t struct_size;
  uint32_t reserved0;
  /* Size in bytes of one element of each array below. */
  uint32_t type_size;
  uint32_t device_size;
  uint32_t bucket_size;
  uint32_t rule_size;
  uint32_t step_size;
  uint32_t reserved1;

  const strata_placement_type *types;
  uint32_t n_types;
  uint32_t n_class_names;
  const char *const *class_names; /* device classes, indexed by class_index */
  const strata_placement_device *devices;
  uint32_t n_devices;
  uint32_t n_buckets;
  const strata_placement_bucket *buckets;
  const strata_placement_rule *rules;
  uint32_t n_rules;

  /* Tunables: part of the map, identical on every node. */
  /* How many failed attempts (collisions, out devices) one chosen item may
   * take before the plugin gives up on it and returns a shorter result. */
  uint32_t choose_total_tries;
  uint32_t reserved[6];
} strata_placement_map;

typedef struct strata_placement_ops {
  uint32_t struct_size;
  uint32_t reserved0;

  /* STRATA_PLACEMENT_CAP_* bits. */
  uint64_t (*capabilities)(void);
  /* Build the plugin's state for `map` (valid only during the call; copy
   * what is kept). host may be NULL. On success *out is the handle; on
   * failure *out is NULL and err says why, e.g. -EOPNOTSUPP for a rule shape
   * the plugin does not implement, -EINVAL for an inconsistent map. */
  int (*create)(const strata_placement_map *map, const strata_host_services *host,
                strata_placement **out, strata_err *err);
  /* Release the handle. Safe with NULL. No map() may be running on it. */
  void (*destroy)(strata_placement *p);
  /* Map input x with rule `rule_id` to at most num_rep devices (fewer when
   * the rule cannot find enough: too few failure domains, too many out
   * devices), written to out[0..cap) in order, first = primary. Returns the
   * count written, -ENOENT for an unknown rule, -EINVAL when num_rep exceeds
   * STRATA_PLACEMENT_MAX_RESULT. Thread-safe; does not allocate. */
  int (*map)(const strata_placement *p, uint32_t rule_id, uint32_t x, uint32_t num_rep,
             int32_t *out, uint32_t cap);
} strata_placement_ops;

#ifdef __cplusplus
}
#endif

#endif /* STRATA_PLACEMENT_H */
