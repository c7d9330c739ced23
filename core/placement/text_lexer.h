// Splits the text form of a map into lines of tokens. '#' starts a comment
// to the end of the line; braces are tokens of their own even when written
// against a word ("host a{").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::placement {

struct TextLine {
  int number = 0;  // 1-based
  std::vector<std::string> tokens;
};

// Lines without tokens (blank, comment only) are left out.
std::vector<TextLine> lex_text(std::string_view text);

}  // namespace strata::placement
