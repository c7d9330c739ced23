#include "msg/keepalive.h"

#include <capnp/message.h>

#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"

namespace strata::msg {

Message make_mon_ping(uint64_t tid) {
  capnp::MallocMessageBuilder b;
  auto c = b.initRoot<wire::MonCommand>();
  c.setTid(tid);
  c.setPrefix("ping");
  c.initArgs(0);
  return make_message(kMsgMonCommand, b);
}

}  // namespace strata::msg
