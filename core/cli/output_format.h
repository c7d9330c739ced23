// How a `strata` command prints its report: `--format text|json|json-pretty`,
// one spelling for every command that offers it. JSON carries everything
// the text shows; json-pretty is the same document indented.
#pragma once

#include <string>

#include "common/status.h"

namespace strata::cli {

enum class OutputFormat { kText, kJson, kJsonPretty };

// The accepted spellings, as error messages and help list them.
inline constexpr const char *kFormatChoices = "text, json or json-pretty";

// "text" | "json" | "json-pretty"; anything else is an error naming the
// accepted spellings.
Result<OutputFormat> parse_output_format(const std::string &name);

// JSON text made human-readable (indented), for --format json-pretty.
std::string pretty_json(const std::string &json);
// Prints a command's JSON (one line, or indented) to stdout.
void print_json(const std::string &json, OutputFormat f);

}  // namespace strata::cli
