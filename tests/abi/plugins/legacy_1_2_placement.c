/*
 * A placement plugin as it was written for ABI 1.1/1.2: plain C, compiled
 * against the frozen 1.2 headers in tests/abi/frozen_1_2, so its
 * capabilities slot takes no argument. A 1.3 host must call it that way.
 * It maps every input to device 0 when the map has one.
 */
#include <errno.h>
#include <stdlib.h>

#include "strata/placement.h"

/* What the tests expect to read back through the old signature. */
#define LEGACY_CAPS (STRATA_PLACEMENT_CAP_REWEIGHT | STRATA_PLACEMENT_CAP_MULTI_TAKE)

struct strata_placement {
  uint32_t n_devices;
};

static uint64_t lp_capabilities(void) { return LEGACY_CAPS; }

static int lp_create(const strata_placement_map *map, const strata_host_services *host,
                     strata_placement **out, strata_err *err) {
  (void)host, (void)err;
  *out = calloc(1, sizeof **out);
  if (!*out) return -ENOMEM;
  (*out)->n_devices = map->n_devices;
  return 0;
}

static void lp_destroy(strata_placement *p) { free(p); }

static int lp_map(const strata_placement *p, uint32_t rule_id, uint32_t x, uint32_t num_rep,
                  int32_t *out, uint32_t cap) {
  (void)rule_id, (void)x;
  if (num_rep == 0 || cap == 0 || p->n_devices == 0) return 0;
  out[0] = 0;
  return 1;
}

static const strata_placement_ops kOps = {sizeof(strata_placement_ops), 0, lp_capabilities,
                                          lp_create, lp_destroy, lp_map};

static const strata_plugin_descriptor kDescriptor = {
    sizeof(strata_plugin_descriptor),
    STRATA_ABI_MAJOR,
    STRATA_ABI_MINOR,
    STRATA_KIND_PLACEMENT,
    0,
    "legacy12",
    "1.2.0",
    "a placement plugin built against the frozen ABI 1.2 headers",
    &kOps,
    NULL,
    0,
    {0}};

STRATA_PLUGIN_EXPORT const strata_plugin_descriptor *strata_plugin_entry_v1(void) {
  return &kDescriptor;
}
