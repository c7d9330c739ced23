// C API: cluster handles, pools, ioctx, commands (strata/client.h).
#include <cstdlib>
#include <cstring>

#include "client/c_api_internal.h"

using namespace strata;
using namespace strata::client;
using namespace strata::client::capi;

namespace {

// The 1.0 sizes: the least struct_size the library accepts.
constexpr size_t kClusterArgsV1 = sizeof(strata_cluster_args);
constexpr size_t kPoolArgsV1 = sizeof(strata_pool_args);
constexpr size_t kPoolInfoV1 = sizeof(strata_pool_info);
constexpr size_t kLocationV1 = sizeof(strata_object_location);

int check_cluster(strata_cluster_t c, const char *fn) {
  if (!c) return set_error(-EINVAL, std::string(fn) + ": NULL cluster handle");
  return 0;
}

// A library-allocated, NUL-terminated copy for the caller to free with
// strata_buffer_free; false on ENOMEM.
bool give_buffer(const std::string &s, char **out, size_t *out_len) {
  if (out_len) *out_len = s.size();
  if (!out) return true;
  *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (!*out) return false;
  std::memcpy(*out, s.data(), s.size());
  (*out)[s.size()] = '\0';
  return true;
}

int command_outputs(int rc, const std::string &message, const std::string &json,
                    const std::string &what, char **out_message, size_t *out_message_len,
                    char **out_json, size_t *out_json_len) {
  if (out_message) *out_message = nullptr;
  if (out_json) *out_json = nullptr;
  if (!give_buffer(message, out_message, out_message_len) ||
      !give_buffer(json, out_json, out_json_len)) {
    if (out_message) std::free(*out_message), *out_message = nullptr;
    return set_error(-ENOMEM, what + ": out of memory for the reply");
  }
  if (rc < 0) return set_error(rc, what + ": " + (message.empty() ? std::strerror(-rc) : message));
  return rc;
}

int mon_command_impl(strata_cluster_t c, const std::string &prefix, const CommandArgs &args,
                     std::string *message = nullptr) {
  auto r = c->client->mon_command(prefix, args, c->client->command_timeout());
  if (!r.ok()) return set_error(r.status());
  if (message) *message = r->message;
  if (r->rc < 0)
    return set_error(r->rc, "'" + prefix + "': " +
                                (r->message.empty() ? std::strerror(-r->rc) : r->message));
  return 0;
}

}  // namespace

extern "C" {

void strata_client_version(int *major, int *minor) {
  if (major) *major = STRATA_CLIENT_VERSION_MAJOR;
  if (minor) *minor = STRATA_CLIENT_VERSION_MINOR;
}

int strata_cluster_create(const strata_cluster_args *args, strata_cluster_t *out) {
  return guard("strata_cluster_create", -ENOMEM, [&]() -> int {
    if (!out) return set_error(-EINVAL, "strata_cluster_create: NULL out");
    *out = nullptr;
    ClusterArgs a;
    if (args) {
      if (!struct_ok(args, kClusterArgsV1))
        return set_error(-EINVAL, "strata_cluster_create: struct_size " +
                                      std::to_string(args->struct_size) + " < " +
                                      std::to_string(kClusterArgsV1));
      if (args->conf_path) a.conf_path = args->conf_path;
      a.use_default_conf = !(args->flags & STRATA_CLUSTER_NO_DEFAULT_CONF);
      if (args->entity) a.entity = args->entity;
      if (args->n_overrides && !args->overrides)
        return set_error(-EINVAL, "strata_cluster_create: NULL overrides with a count");
      for (size_t i = 0; i < args->n_overrides; ++i) {
        if (!args->overrides[i])
          return set_error(-EINVAL, "strata_cluster_create: override " + std::to_string(i) +
                                        " is NULL");
        a.overrides.emplace_back(args->overrides[i]);
      }
    }
    auto client = ClusterClient::create(a);
    if (!client.ok()) return set_error(client.status());
    *out = new strata_cluster{std::move(*client)};
    return 0;
  });
}

int strata_cluster_conf_set(strata_cluster_t c, const char *key, const char *value) {
  return guard("strata_cluster_conf_set", -EIO, [&]() -> int {
    if (int rc = check_cluster(c, "strata_cluster_conf_set")) return rc;
    if (!key || !value) return set_error(-EINVAL, "strata_cluster_conf_set: NULL key or value");
    Status st = c->client->conf_set(key, value);
    return st.ok() ? 0 : set_error(st);
  });
}

int64_t strata_cluster_conf_get(strata_cluster_t c, const char *key, char *buf, size_t len) {
  return guard<int64_t>("strata_cluster_conf_get", -EIO, [&]() -> int64_t {
    if (int rc = check_cluster(c, "strata_cluster_conf_get")) return rc;
    if (!key) return set_error(-EINVAL, "strata_cluster_conf_get: NULL key");
    auto v = c->client->conf_get(key);
    if (!v.ok()) return set_error(v.status());
    return copy_text(*v, buf, len);
  });
}

int strata_cluster_connect(strata_cluster_t c, uint32_t timeout_ms) {
  return guard("strata_cluster_connect", -EIO, [&]() -> int {
    if (int rc = check_cluster(c, "strata_cluster_connect")) return rc;
    Status st = c->client->connect(std::chrono::milliseconds(timeout_ms));
    return st.ok() ? 0 : set_error(st);
  });
}

void strata_cluster_shutdown(strata_cluster_t c) {
  guard_void("strata_cluster_shutdown", [&] {
    if (!c) return;
    if (in_completion_callback()) {
      // Stopping joins the thread this callback runs on.
      set_error(-EDEADLK, "strata_cluster_shutdown: called from a completion callback (ignored)");
      return;
    }
    c->client->shutdown();
    delete c;
  });
}

int64_t strata_cluster_instance_id(strata_cluster_t c, char *buf, size_t len) {
  return guard<int64_t>("strata_cluster_instance_id", -EIO, [&]() -> int64_t {
    if (int rc = check_cluster(c, "strata_cluster_instance_id")) return rc;
    return copy_text(c->client->instance_id(), buf, len);
  });
}

int64_t strata_cluster_fsid(strata_cluster_t c, char *buf, size_t len) {
  return guard<int64_t>("strata_cluster_fsid", -EIO, [&]() -> int64_t {
    if (int rc = check_cluster(c, "strata_cluster_fsid")) return rc;
    auto view = c->client->map();
    if (!view) return set_error(c->client->usable().ok() ? Status::Error(ENOTCONN, "no map")
                                                         : c->client->usable());
    return copy_text(view->map().fsid, buf, len);
  });
}

uint64_t strata_cluster_map_epoch(strata_cluster_t c) {
  return guard<uint64_t>("strata_cluster_map_epoch", 0,
                         [&]() -> uint64_t { return c ? c->client->epoch() : 0; });
}

int strata_cluster_wait_for_epoch(strata_cluster_t c, uint64_t epoch, uint32_t timeout_ms) {
  return guard("strata_cluster_wait_for_epoch", -EIO, [&]() -> int {
    if (int rc = check_cluster(c, "strata_cluster_wait_for_epoch")) return rc;
    if (Status st = c->client->usable(); !st.ok()) return set_error(st);
    auto timeout = std::chrono::milliseconds(timeout_ms ? timeout_ms : 30000);
    if (!c->client->wait_for_epoch(epoch, timeout))
      return set_error(-ETIMEDOUT, "map epoch " + std::to_string(epoch) + " did not arrive within " +
                                       std::to_string(timeout.count()) + " ms (have " +
                                       std::to_string(c->client->epoch()) + ")");
    return 0;
  });
}

int64_t strata_pool_list(strata_cluster_t c, char *buf, size_t len) {
  return guard<int64_t>("strata_pool_list", -EIO, [&]() -> int64_t {
    if (int rc = check_cluster(c, "strata_pool_list")) return rc;
    if (Status st = c->client->usable(); !st.ok()) return set_error(st);
    std::string all;
    for (const auto &p : c->client->pools()) {
      all += p.name;
      all += '\0';
    }
    all += '\0';
    if (buf && all.size() <= len) std::memcpy(buf, all.data(), all.size());
    return static_cast<int64_t>(all.size());
  });
}

int strata_pool_create(strata_cluster_t c, const char *name, const strata_pool_args *args) {
  return guard("strata_pool_create", -EIO, [&]() -> int {
    if (int rc = check_cluster(c, "strata_pool_create")) return rc;
    if (!name || !*name) return set_error(-EINVAL, "strata_pool_create: no pool name");
    CommandArgs a = {{"name", name}};
    if (args) {
      if (!struct_ok(args, kPoolArgsV1))
        return set_error(-EINVAL, "strata_pool_create: struct_size too small");
      if (args->size) a.emplace_back("size", std::to_string(args->size));
      if (args->min_size) a.emplace_back("min_size", std::to_string(args->min_size));
      if (args->pg_num) a.emplace_back("pg_num", std::to_string(args->pg_num));
    }
    return mon_command_impl(c, "pool create", a);
  });
}

int strata_pool_delete(strata_cluster_t c, const char *name) {
  return guard("strata_pool_delete", -EIO, [&]() -> int {
    if (int rc = check_cluster(c, "strata_pool_delete")) return rc;
    if (!name || !*name) return set_error(-EINVAL, "strata_pool_delete: no pool name");
    return mon_command_impl(c, "pool rm", {{"name", name}});
  });
}

int64_t strata_pool_lookup(strata_cluster_t c, const char *name) {
  return guard<int64_t>("strata_pool_lookup", -EIO, [&]() -> int64_t {
    if (int rc = check_cluster(c, "strata_pool_lookup")) return rc;
    if (!name) return set_error(-EINVAL, "strata_pool_lookup: NULL name");
    auto p = c->client->find_pool(name);
    if (!p.ok()) return set_error(p.status());
    return p->id;
  });
}

int strata_pool_get_info(strata_cluster_t c, const char *name, strata_pool_info *out) {
  return guard("strata_pool_get_info", -EIO, [&]() -> int {
    if (int rc = check_cluster(c, "strata_pool_get_info")) return rc;
    if (!name) return set_error(-EINVAL, "strata_pool_get_info: NULL name");
    if (!struct_ok(out, kPoolInfoV1))
      return set_error(-EINVAL, "strata_pool_get_info: NULL out or struct_size too small");
    auto p = c->client->find_pool(name);
    if (!p.ok()) return set_error(p.status());
    out->id = p->id;
    out->size = p->size;
    out->min_size = p->min_size;
    out->pg_num = p->pg_num;
    out->rule = p->rule;
    return 0;
  });
}

int strata_ioctx_create(strata_cluster_t c, const char *pool, strata_ioctx_t *out) {
  return guard("strata_ioctx_create", -ENOMEM, [&]() -> int {
    if (int rc = check_cluster(c, "strata_ioctx_create")) return rc;
    if (!out) return set_error(-EINVAL, "strata_ioctx_create: NULL out");
    *out = nullptr;
    if (!pool) return set_error(-EINVAL, "strata_ioctx_create: NULL pool name");
    auto p = c->client->find_pool(pool);
    if (!p.ok()) return set_error(p.status());
    auto *io = new strata_ioctx;
    io->client = c->client;
    io->pool = p->id;
    *out = io;
    return 0;
  });
}

int strata_ioctx_create_by_id(strata_cluster_t c, int64_t pool_id, strata_ioctx_t *out) {
  return guard("strata_ioctx_create_by_id", -ENOMEM, [&]() -> int {
    if (int rc = check_cluster(c, "strata_ioctx_create_by_id")) return rc;
    if (!out) return set_error(-EINVAL, "strata_ioctx_create_by_id: NULL out");
    *out = nullptr;
    if (pool_id < 0 || pool_id > UINT32_MAX)
      return set_error(-ENOENT, "no pool with id " + std::to_string(pool_id));
    auto p = c->client->find_pool(static_cast<uint32_t>(pool_id));
    if (!p.ok()) return set_error(p.status());
    auto *io = new strata_ioctx;
    io->client = c->client;
    io->pool = p->id;
    *out = io;
    return 0;
  });
}

void strata_ioctx_destroy(strata_ioctx_t io) {
  guard_void("strata_ioctx_destroy", [&] { delete io; });
}

int64_t strata_ioctx_pool_id(strata_ioctx_t io) {
  if (!io) return set_error(-EINVAL, "strata_ioctx_pool_id: NULL ioctx");
  return io->pool;
}

int strata_object_locate(strata_ioctx_t io, const char *oid, strata_object_location *out) {
  return guard("strata_object_locate", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_object_locate")) return rc;
    if (!struct_ok(out, kLocationV1))
      return set_error(-EINVAL, "strata_object_locate: NULL out or struct_size too small");
    auto view = io->client->map();
    if (!view) return set_error(io->client->usable().ok() ? Status::Error(ENOTCONN, "no map")
                                                          : io->client->usable());
    if (!view->map().pool(io->pool))
      return set_error(-ENOENT, "pool " + std::to_string(io->pool) + " no longer exists");
    auto pg = view->pg_of(io->pool, oid);
    auto acting = view->acting(pg);
    out->pool = pg.pool;
    out->seed = pg.seed;
    out->primary = acting.empty() ? -1 : acting[0];
    out->epoch = view->epoch();
    out->n_acting = static_cast<uint32_t>(std::min<size_t>(acting.size(), STRATA_MAX_ACTING));
    for (uint32_t i = 0; i < out->n_acting; ++i) out->acting[i] = acting[i];
    return 0;
  });
}

int strata_mon_command(strata_cluster_t c, const char *prefix, const strata_cmd_arg *args,
                       size_t n_args, char **out_message, size_t *out_message_len,
                       char **out_json, size_t *out_json_len) {
  return guard("strata_mon_command", -EIO, [&]() -> int {
    if (out_message) *out_message = nullptr;
    if (out_json) *out_json = nullptr;
    if (int rc = check_cluster(c, "strata_mon_command")) return rc;
    if (!prefix || !*prefix) return set_error(-EINVAL, "strata_mon_command: no prefix");
    if (n_args && !args) return set_error(-EINVAL, "strata_mon_command: NULL args with a count");
    CommandArgs a;
    for (size_t i = 0; i < n_args; ++i) {
      if (!args[i].key || !args[i].value)
        return set_error(-EINVAL, "strata_mon_command: argument " + std::to_string(i) +
                                      " has a NULL key or value");
      a.emplace_back(args[i].key, args[i].value);
    }
    auto r = c->client->mon_command(prefix, a, c->client->command_timeout());
    if (!r.ok()) return set_error(r.status());
    return command_outputs(r->rc, r->message, r->json, std::string("'") + prefix + "'",
                           out_message, out_message_len, out_json, out_json_len);
  });
}

int strata_pg_command(strata_cluster_t c, uint32_t pool, uint32_t seed, uint32_t flags,
                      char **out_message, size_t *out_message_len, char **out_json,
                      size_t *out_json_len) {
  return guard("strata_pg_command", -EIO, [&]() -> int {
    if (out_message) *out_message = nullptr;
    if (out_json) *out_json = nullptr;
    if (int rc = check_cluster(c, "strata_pg_command")) return rc;
    if (flags & ~(STRATA_PG_SCRUB_DEEP | STRATA_PG_REPAIR))
      return set_error(-EINVAL, "strata_pg_command: unknown flags");
    auto r = c->client->pg_command(pool, seed, flags & STRATA_PG_SCRUB_DEEP,
                                   flags & STRATA_PG_REPAIR);
    if (!r.ok()) return set_error(r.status());
    char pg[32];
    std::snprintf(pg, sizeof pg, "pg %u.%x", pool, seed);
    return command_outputs(r->rc, r->message, r->json,
                           std::string(flags & STRATA_PG_REPAIR ? "repair " : "scrub ") + pg,
                           out_message, out_message_len, out_json, out_json_len);
  });
}

void strata_buffer_free(void *buf) { std::free(buf); }

}  // extern "C"
