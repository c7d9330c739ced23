// Building the OSD's outgoing messages in one expression (internal).
#pragma once

#include <capnp/message.h>

#include <string>
#include <utility>
#include <vector>

#include "msg/message_types.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"

namespace strata::osd {

// Builds a message of `type` whose root is a T filled by fill(T::Builder).
template <class T, class Fill>
msg::Message build_msg(uint16_t type, Fill &&fill, std::vector<std::string> segs = {}) {
  capnp::MallocMessageBuilder b;
  fill(b.initRoot<T>());
  return msg::make_message(type, b, std::move(segs));
}

}  // namespace strata::osd
