// The plugin's options and descriptor: LineServer behind the SDK's frontend
// adapter (strata/cpp/frontend.hpp), which wraps every entry of the C
// vtable so that no exception crosses into the host.
#include <algorithm>
#include <memory>

#include "line_server.h"
#include "strata/cpp/frontend.hpp"

namespace {

const strata_option_spec kOptions[] = {
    {"pool", STRATA_OPT_STRING, "lines", nullptr,
     "pool whose objects the protocol writes and reads (it must exist)"},
    {"listen", STRATA_OPT_STRING, "127.0.0.1:7390", nullptr,
     "IPv4 address and port to serve on; port 0 picks a free one"},
    {"port_file", STRATA_OPT_STRING, "", nullptr,
     "file to write the bound port into once listening (removed at stop)"},
    {"max_line", STRATA_OPT_INT, "64K", nullptr, "longest request line accepted, in bytes"},
};

// The plugin instance: the server, and the adapter's calls forwarded to it.
struct LinesFrontend {
  std::unique_ptr<lines::LineServer> server;

  static std::unique_ptr<LinesFrontend> start(const strata_frontend_host *host,
                                              strata_cluster_t cluster,
                                              const strata::sdk::FrontendOptions &o) {
    lines::Settings s;
    s.pool = o.get("pool");
    s.listen = o.get("listen");
    s.port_file = o.get("port_file");
    s.max_line = std::max<size_t>(16, o.number("max_line"));
    auto fe = std::make_unique<LinesFrontend>();
    fe->server = std::make_unique<lines::LineServer>(host, cluster, s);
    return fe;
  }
  int stop(std::string *) {
    server.reset();  // joins the serve thread, closes, releases the ioctx
    return 0;
  }
  std::string status_line() const { return server->status_line(); }
  std::string status_json() const { return server->status_json(); }
  std::string metrics() const { return server->metrics(); }
};

}  // namespace

STRATA_FRONTEND_PLUGIN(LinesFrontend, "lines", "0.1.0",
                       "a line protocol on TCP storing values as objects (example frontend)",
                       kOptions)
