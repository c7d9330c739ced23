// The OSD's failpoints (common/failpoints.h): the places where tests make
// an OSD fail on purpose, armed through the daemon's Env or the
// `failpoints` config key.
#pragma once

#include <string>
#include <vector>

namespace strata::osd {

// Subject: the object. Hit by the primary when a write is durable on every
// acting replica, just before the acknowledgement goes to the client.
// kill: the client hears nothing and must resend to the next primary;
// error: the acknowledgement is dropped (the client resends).
inline constexpr const char *kFailWriteDurableBeforeAck = "osd.write_durable_before_ack";

inline std::vector<std::string> osd_failpoint_names() { return {kFailWriteDurableBeforeAck}; }

}  // namespace strata::osd
