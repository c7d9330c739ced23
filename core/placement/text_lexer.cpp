#include "placement/text_lexer.h"

namespace strata::placement {

std::vector<TextLine> lex_text(std::string_view text) {
  std::vector<TextLine> out;
  int number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    TextLine tl{number, {}};
    std::string word;
    auto flush = [&] {
      if (!word.empty()) tl.tokens.push_back(std::move(word));
      word.clear();
    };
    for (char c : line) {
      if (c == ' ' || c == '\t' || c == '\r') {
        flush();
      } else if (c == '{' || c == '}') {
        flush();
        tl.tokens.emplace_back(1, c);
      } else {
        word += c;
      }
    }
    flush();
    if (!tl.tokens.empty()) out.push_back(std::move(tl));
    if (end == text.size()) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace strata::placement
