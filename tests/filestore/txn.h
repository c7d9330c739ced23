// Transactions in the filestore tests: the shared raw-transaction builder
// (sdk/conformance/txn_builder.h), made with the seq it is applied at:
// `Txn(1).mkcoll("c").write("c", "o", 0, "abc")`.
#pragma once

#include "txn_builder.h"

namespace strata::test {

using Txn = conformance::TxnBuilder;

}  // namespace strata::test
