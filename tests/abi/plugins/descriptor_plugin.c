/*
 * A plugin that is nothing but a descriptor, compiled several times with
 * different definitions to make the broken plugin files the host must refuse
 * (tests/abi/CMakeLists.txt lists them):
 *   PLUGIN_ABI_MAJOR / PLUGIN_ABI_MINOR  the ABI version it claims
 *   PLUGIN_JOURNAL                       defined: a journal vtable; else a backend's
 *   PLUGIN_NAME                          its name
 *   PLUGIN_ENTRY                         the name of its exported entry function
 *   PLUGIN_OPS_SIZE                      the struct_size its vtable claims
 *   PLUGIN_N_OPTIONS                     options it declares (with a NULL array)
 * Its vtable's functions are all null: the host must refuse it.
 */
#include "strata/journal.h"
#include "strata/objectstore.h"

#ifndef PLUGIN_ABI_MAJOR
#define PLUGIN_ABI_MAJOR STRATA_ABI_MAJOR
#endif
#ifndef PLUGIN_ABI_MINOR
#define PLUGIN_ABI_MINOR STRATA_ABI_MINOR
#endif
/* STRATA_KIND_* are enum constants, which #if cannot compare: the vtable
 * layout follows PLUGIN_JOURNAL. */
#ifdef PLUGIN_JOURNAL
#define PLUGIN_KIND STRATA_KIND_JOURNAL
#else
#define PLUGIN_KIND STRATA_KIND_OBJECTSTORE
#endif
/* Options declared; the options array is always NULL. */
#ifndef PLUGIN_N_OPTIONS
#define PLUGIN_N_OPTIONS 0
#endif
#ifndef PLUGIN_ENTRY
#define PLUGIN_ENTRY strata_plugin_entry_v1
#endif

#ifdef PLUGIN_JOURNAL
#ifndef PLUGIN_OPS_SIZE
#define PLUGIN_OPS_SIZE sizeof(strata_journal_ops)
#endif
static const strata_journal_ops kOps = {PLUGIN_OPS_SIZE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#else
#ifndef PLUGIN_OPS_SIZE
#define PLUGIN_OPS_SIZE sizeof(strata_objectstore_ops)
#endif
static const strata_objectstore_ops kOps = {
    PLUGIN_OPS_SIZE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#endif

static const strata_plugin_descriptor kDescriptor = {
    sizeof(strata_plugin_descriptor),
    PLUGIN_ABI_MAJOR,
    PLUGIN_ABI_MINOR,
    PLUGIN_KIND,
    0,
    PLUGIN_NAME,
    "0.0.1",
    "a deliberately broken plugin for the ABI refusal tests",
    &kOps,
    0,
    PLUGIN_N_OPTIONS,
    {0}};

STRATA_PLUGIN_EXPORT const strata_plugin_descriptor *PLUGIN_ENTRY(void) { return &kDescriptor; }
