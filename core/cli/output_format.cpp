#include "cli/output_format.h"

#include <cstdio>

#include "common/json.h"

namespace strata::cli {

Result<OutputFormat> parse_output_format(const std::string &name) {
  if (name == "text") return OutputFormat::kText;
  if (name == "json") return OutputFormat::kJson;
  if (name == "json-pretty") return OutputFormat::kJsonPretty;
  return Status::Error(EINVAL,
                       "unknown format '" + name + "' (--format takes " + kFormatChoices + ")");
}

namespace {

void pretty(const json::Value &v, int depth, std::string &out) {
  std::string pad(size_t(depth + 1) * 2, ' '), end_pad(size_t(depth) * 2, ' ');
  if (v.is_object()) {
    const auto &o = v.as_object();
    if (o.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (size_t i = 0; i < o.size(); ++i) {
      out += pad + json::quote(o[i].first) + ": ";
      pretty(o[i].second, depth + 1, out);
      out += i + 1 < o.size() ? ",\n" : "\n";
    }
    out += end_pad + "}";
  } else if (v.is_array()) {
    const auto &a = v.as_array();
    if (a.empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    for (size_t i = 0; i < a.size(); ++i) {
      out += pad;
      pretty(a[i], depth + 1, out);
      out += i + 1 < a.size() ? ",\n" : "\n";
    }
    out += end_pad + "]";
  } else {
    out += v.dump();
  }
}

}  // namespace

std::string pretty_json(const std::string &json) {
  auto v = json::parse(json);
  if (!v.ok()) return json;
  std::string out;
  pretty(*v, 0, out);
  return out;
}

void print_json(const std::string &json, OutputFormat f) {
  std::string text = f == OutputFormat::kJsonPretty ? pretty_json(json) : json;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace strata::cli
