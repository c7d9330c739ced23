// Service sessions (strata_session_* of strata/client.h) over
// client/service_session.h.
//
// strata_session_close from the session's own callback is supported: it
// returns at once, the callback running now is the last one, and the
// session's thread exits when it returns.
#include <cerrno>

#include "client/c_api_internal.h"
#include "client/service_session.h"

struct strata_session {
  std::shared_ptr<strata::client::ServiceSession> session;
};

using namespace strata::client;
using namespace strata::client::capi;

extern "C" {

int strata_session_open(strata_cluster_t c, const char *service, const char *target,
                        strata_session_cb cb, void *arg, strata_session_t *out) {
  return guard("strata_session_open", -EIO, [&]() -> int {
    if (out) *out = nullptr;
    if (!c || !service || !target || !cb || !out)
      return set_error(-EINVAL,
                       "strata_session_open: NULL cluster, service, target, "
                       "callback or out");
    auto callback = [cb, arg](int event, uint32_t type, std::string_view payload) {
      cb(arg, event, type, payload.data(), payload.size());
    };
    auto s = c->client->open_session(service, target, std::move(callback), c->client);
    if (!s.ok())
      return set_error(
          s.status().Context(std::string("strata_session_open ") + service + " " + target));
    *out = new strata_session{std::move(*s)};
    // Only now may the callback run: it may send with *out.
    (*out)->session->deliver_events();
    return 0;
  });
}

int strata_session_send(strata_session_t s, uint32_t type, const void *payload, size_t len) {
  return guard("strata_session_send", -EIO, [&]() -> int {
    if (!s || (!payload && len)) return set_error(-EINVAL, "strata_session_send: NULL argument");
    int rc = s->session->send(type, bytes_view(payload, len));
    switch (rc) {
      case 0:
        return 0;
      case -EINVAL:
        return set_error(rc, "strata_session_send: type " + std::to_string(type) +
                                 " is outside the session range 1024..2047");
      case -EMSGSIZE:
        return set_error(rc, "strata_session_send: payload of " + std::to_string(len) +
                                 " bytes is over the messenger's limit");
      default:
        return set_error(rc, "strata_session_send: no instance connected");
    }
  });
}

int64_t strata_session_status(strata_session_t s, char *buf, size_t len) {
  return guard<int64_t>("strata_session_status", -EIO, [&]() -> int64_t {
    if (!s) return set_error(-EINVAL, "strata_session_status: NULL session");
    return copy_text(s->session->status_json(), buf, len);
  });
}

void strata_session_close(strata_session_t s) {
  guard_void("strata_session_close", [&] {
    if (!s) return;
    s->session->close();
    delete s;
  });
}

}  // extern "C"
