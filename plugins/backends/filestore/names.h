// Object and collection names are arbitrary bytes; error messages and log
// lines show them through printable().
#pragma once

#include <string>
#include <string_view>

namespace strata::filestore {

// `name` with bytes outside printable ASCII (and backslash) as \xNN, cut
// after `max_len` input bytes with "..." appended.
std::string printable(std::string_view name, size_t max_len = 80);

// "object 'o' in collection 'c'" for messages.
std::string describe_object(std::string_view coll, std::string_view oid);

}  // namespace strata::filestore
