/*
 * A plugin built without hidden visibility or version script: it exports a
 * helper next to its entry symbol. The export check must flag it (its ctest
 * entry is expected to fail), which proves the check can fail at all.
 */
#include "strata/objectstore.h"

int leaky_helper_everyone_can_see(int x) { return x + 1; }

static const strata_objectstore_ops kOps = {
    sizeof(strata_objectstore_ops), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static const strata_plugin_descriptor kDescriptor = {sizeof(strata_plugin_descriptor),
                                                     STRATA_ABI_MAJOR,
                                                     STRATA_ABI_MINOR,
                                                     STRATA_KIND_OBJECTSTORE,
                                                     0,
                                                     "leaky",
                                                     "0.0.1",
                                                     "exports more than its entry symbol",
                                                     &kOps,
                                                     0,
                                                     0,
                                                     {0}};

STRATA_PLUGIN_EXPORT const strata_plugin_descriptor *strata_plugin_entry_v1(void) {
  return &kDescriptor;
}
