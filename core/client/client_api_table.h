// The client routine table (strata/client_api.h) filled from this client
// library, for the host to hand to frontend plugins.
#pragma once

#include "strata/client_api.h"

namespace strata::client {

// Every routine set (struct_size = sizeof(strata_client_api)). Static
// storage, valid for the life of the process; thread-safe.
const strata_client_api *client_api_table();

}  // namespace strata::client
