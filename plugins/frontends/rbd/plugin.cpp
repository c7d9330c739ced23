// The rbd frontend's descriptor and the C vtable of strata/frontend.h
// (`strata nbd serve` and `strata image map` run it), each entry wrapped
// so that no exception crosses into the host.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "image_export.h"
#include "strata/cpp/plugin_support.hpp"

namespace {

using strata::rbd::ImageExport;
using strata::sdk::Error;
using strata::sdk::guard;

int64_t copy_out(const std::string &text, char *buf, size_t len) {
  if (len > 0) {
    size_t n = std::min(len - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return int64_t(text.size());
}

ImageExport *instance(strata_frontend *fe) { return reinterpret_cast<ImageExport *>(fe); }

int start(const strata_frontend_host *host, strata_cluster_t cluster,
          const strata_frontend_args *args, strata_frontend **out, strata_err *err) {
  return guard(err, [&]() -> int {
    *out = nullptr;
    if (!host || host->struct_size < sizeof(strata_frontend_host) || !host->client)
      throw Error(EINVAL, "the host gave no client routine table");
    std::vector<std::pair<std::string, std::string>> kv;
    for (size_t i = 0; i < args->n_options; ++i)
      kv.emplace_back(args->options[i].key, args->options[i].value);
    strata::rbd::ExportSettings s;
    try {
      s = strata::rbd::parse_export_settings(kv);
    } catch (const std::invalid_argument &e) {
      throw Error(EINVAL, e.what());
    }
    *out = reinterpret_cast<strata_frontend *>(new ImageExport(host, cluster, std::move(s)));
    return 0;
  });
}

int stop(strata_frontend *fe, strata_err *err) {
  return guard(err, [&]() -> int {
    std::unique_ptr<ImageExport> e(instance(fe));
    std::string why;
    int rc = e->stop(&why);
    if (rc < 0) throw Error(rc, why);
    return 0;
  });
}

int64_t status(strata_frontend *fe, uint32_t format, char *buf, size_t len) {
  return guard(nullptr, [&]() -> int64_t {
    if (format == STRATA_FRONTEND_STATUS_LINE) return copy_out(instance(fe)->status_line(), buf, len);
    if (format == STRATA_FRONTEND_STATUS_JSON) return copy_out(instance(fe)->status_json(), buf, len);
    return -EOPNOTSUPP;
  });
}

int64_t metrics(strata_frontend *fe, char *buf, size_t len) {
  return guard(nullptr, [&]() -> int64_t { return copy_out(instance(fe)->metrics(), buf, len); });
}

const strata_frontend_ops kOps = {sizeof(strata_frontend_ops), 0, start, stop, status, metrics};

size_t option_count() {
  size_t n = 0;
  strata::rbd::export_option_specs(&n);
  return n;
}

const strata_plugin_descriptor kDescriptor = {
    sizeof(strata_plugin_descriptor),
    STRATA_ABI_MAJOR,
    STRATA_ABI_MINOR,
    STRATA_KIND_FRONTEND,
    0,
    "rbd",
    "0.1.0",
    "block images over NBD or as one file over FUSE (strata nbd serve, strata image map)",
    &kOps,
    strata::rbd::export_option_specs(nullptr),
    option_count(),
    {}};

}  // namespace

STRATA_DEFINE_PLUGIN_ENTRY(&kDescriptor)
