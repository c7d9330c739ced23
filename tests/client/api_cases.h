// The C API's behaviour, written once and run against every kind of
// cluster the tests can start: the in-process one with fake OSDs
// (fake_cluster_test.cpp) and real `strata mon` / `strata osd` processes
// (process_cluster_test.cpp). Each case gets a connected cluster handle and
// the name of a pool it may fill (object names are unique per case).
#pragma once

#include <string>

#include "strata/client.h"

namespace clienttest {

struct ApiEnv {
  strata_cluster_t cluster = nullptr;
  std::string pool;
};

#define STRATA_CLIENT_API_CASES(X)                                                        \
  X(object_io, "whole-object and ranged I/O, stat, truncate, zero, create, remove")      \
  X(xattrs, "xattrs: set, get (with a short buffer), list, remove")                      \
  X(omap, "omap: binary keys, get by keys, ranged listing with paging, removal, header") \
  X(write_op, "a write op is atomic and its guards stop it before anything is applied")   \
  X(read_op, "a read op reports each step's result and the object's version")            \
  X(aio, "asynchronous calls complete with callbacks, versions and flush")               \
  X(listing, "listing a pool returns every object once and resumes from a cursor")       \
  X(pools, "pools: create, list, look up, describe, delete")                             \
  X(commands, "monitor and PG commands return text and JSON")                            \
  X(errors, "missing objects, pools and bad arguments give the documented errors")

#define STRATA_CLIENT_DECLARE_CASE(name, text) void api_case_##name(ApiEnv &env);
STRATA_CLIENT_API_CASES(STRATA_CLIENT_DECLARE_CASE)
#undef STRATA_CLIENT_DECLARE_CASE

}  // namespace clienttest
