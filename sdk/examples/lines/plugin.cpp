// The plugin's descriptor, options and the C vtable of strata/frontend.h,
// each entry wrapped so that no exception crosses into the host.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "line_server.h"
#include "strata/cpp/plugin_support.hpp"

namespace {

using strata::sdk::Error;
using strata::sdk::guard;

const strata_option_spec kOptions[] = {
    {"pool", STRATA_OPT_STRING, "lines", nullptr,
     "pool whose objects the protocol writes and reads (it must exist)"},
    {"listen", STRATA_OPT_STRING, "127.0.0.1:7390", nullptr,
     "IPv4 address and port to serve on; port 0 picks a free one"},
    {"port_file", STRATA_OPT_STRING, "", nullptr,
     "file to write the bound port into once listening (removed at stop)"},
    {"max_line", STRATA_OPT_INT, "64K", nullptr, "longest request line accepted, in bytes"},
};

// The host passes every declared option, validated, defaults filled in.
std::string option(const strata_frontend_args *a, const char *name) {
  for (size_t i = 0; i < a->n_options; ++i)
    if (std::strcmp(a->options[i].key, name) == 0) return a->options[i].value;
  throw Error(EINVAL, std::string("the host passed no '") + name + "' option");
}

size_t size_option(const strata_frontend_args *a, const char *name) {
  std::string v = option(a, name);
  char *end = nullptr;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  int shift = 0;
  switch (*end | 0x20) {
    case 'k':
      shift = 10;
      break;
    case 'm':
      shift = 20;
      break;
    case 'g':
      shift = 30;
      break;
    default:
      break;
  }
  return size_t(n << shift);
}

int64_t copy_out(const std::string &text, char *buf, size_t len) {
  if (len > 0) {
    size_t n = std::min(len - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return int64_t(text.size());
}

lines::LineServer *server(strata_frontend *fe) { return reinterpret_cast<lines::LineServer *>(fe); }

int start(const strata_frontend_host *host, strata_cluster_t cluster,
          const strata_frontend_args *args, strata_frontend **out, strata_err *err) {
  return guard(err, [&]() -> int {
    *out = nullptr;
    if (!host || host->struct_size < sizeof(strata_frontend_host) || !host->client)
      throw Error(EINVAL, "the host gave no client routine table");
    lines::Settings s;
    s.pool = option(args, "pool");
    s.listen = option(args, "listen");
    s.port_file = option(args, "port_file");
    s.max_line = std::max<size_t>(16, size_option(args, "max_line"));
    *out = reinterpret_cast<strata_frontend *>(new lines::LineServer(host, cluster, s));
    return 0;
  });
}

int stop(strata_frontend *fe, strata_err *err) {
  return guard(err, [&]() -> int {
    delete server(fe);  // joins the serve thread, closes, releases the ioctx
    return 0;
  });
}

int64_t status(strata_frontend *fe, uint32_t format, char *buf, size_t len) {
  return guard(nullptr, [&]() -> int64_t {
    if (format == STRATA_FRONTEND_STATUS_LINE) return copy_out(server(fe)->status_line(), buf, len);
    if (format == STRATA_FRONTEND_STATUS_JSON) return copy_out(server(fe)->status_json(), buf, len);
    return -EOPNOTSUPP;
  });
}

int64_t metrics(strata_frontend *fe, char *buf, size_t len) {
  return guard(nullptr, [&]() -> int64_t { return copy_out(server(fe)->metrics(), buf, len); });
}

const strata_frontend_ops kOps = {sizeof(strata_frontend_ops), 0, start, stop, status, metrics};

const strata_plugin_descriptor kDescriptor = {
    sizeof(strata_plugin_descriptor),
    STRATA_ABI_MAJOR,
    STRATA_ABI_MINOR,
    STRATA_KIND_FRONTEND,
    0,
    "lines",
    "0.1.0",
    "a line protocol on TCP storing values as objects (example frontend)",
    &kOps,
    kOptions,
    sizeof kOptions / sizeof kOptions[0],
    {}};

}  // namespace

STRATA_DEFINE_PLUGIN_ENTRY(&kDescriptor)
