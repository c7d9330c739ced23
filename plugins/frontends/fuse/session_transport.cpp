#include "session_transport.h"

#include <cerrno>

#include "strata/frontend_client.h"

namespace strata::fuse {

int SessionTransport::open(const std::string &fs_name, MdsClient *sink) {
  sink_ = sink;
  return strata_session_open(cluster_, "mds", fs_name.c_str(), &SessionTransport::on_event, this,
                             &session_);
}

void SessionTransport::close() {
  if (session_) strata_session_close(session_);
  session_ = nullptr;
}

int SessionTransport::send(uint16_t type, const void *payload, size_t len) {
  if (!session_) return -ENOTCONN;
  return strata_session_send(session_, type, payload, len);
}

std::string SessionTransport::status() const {
  if (!session_) return "";
  char buf[512];
  int64_t n = strata_session_status(session_, buf, sizeof buf);
  if (n < 0) return "";
  return std::string(buf, size_t(n) < sizeof buf ? size_t(n) : sizeof buf - 1);
}

void SessionTransport::on_event(void *arg, int event, uint32_t type, const void *payload,
                                size_t len) {
  auto *self = static_cast<SessionTransport *>(arg);
  switch (event) {
    case STRATA_SESSION_CONNECTED:
      self->sink_->on_connected();
      break;
    case STRATA_SESSION_DISCONNECTED:
      self->sink_->on_disconnected();
      break;
    case STRATA_SESSION_MESSAGE:
      self->sink_->on_message(uint16_t(type), payload, len);
      break;
    default:
      break;
  }
}

}  // namespace strata::fuse
