// Standard base64 (RFC 4648, with padding) for keyring secrets.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace strata::msg {

std::string base64_encode(std::string_view raw);
// Nothing for text that is not canonical padded base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace strata::msg
