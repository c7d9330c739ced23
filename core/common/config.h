// The configuration: one INI-style file plus `--set key=value` overrides.
//
//   [global]            every daemon and command
//   [osd]               every OSD (and `strata store ...` commands)
//   [osd.3]             one OSD
//
// A lookup for entity "osd.3" tries, in order: the overrides, [osd.3], [osd],
// [global]. Values are validated against option specs (core options plus
// the options each selected plugin declares); unknown keys and values that
// do not parse are errors that name the file and line, never ignored.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "strata/plugin.h"

namespace strata {

class Config {
 public:
  struct Entry {
    std::string section;  // "global", "osd", "osd.3"; "" for overrides
    std::string key;
    std::string value;
    std::string origin;   // "strata.conf:12" or "--set"
  };

  static Result<Config> parse(const std::string &text, const std::string &source_name);
  static Result<Config> load_file(const std::string &path);

  // "key=value" from the command line; also "section.key=value" is NOT
  // supported on purpose: overrides apply to the entity being run.
  Status add_override(const std::string &assignment);
  void set(const std::string &section, const std::string &key, const std::string &value);

  // The effective value for `entity` ("osd.3", "osd", "mon", "global").
  std::optional<std::string> get(const std::string &entity, const std::string &key) const;
  // The entries that apply to `entity`, most specific first, duplicates removed.
  std::vector<Entry> effective(const std::string &entity) const;
  const std::vector<Entry> &entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;  // file order; overrides appended with section ""
};

// Core options for stores/OSDs (plugins add their own specs).
const std::vector<strata_option_spec> &core_store_options();

// Checks that `value` parses as `spec` says. The message names the key.
Status validate_value(const strata_option_spec &spec, const std::string &value);
// Parses an integer with optional K/M/G/T suffix (powers of 1024).
Result<long long> parse_size(const std::string &value);
Result<bool> parse_bool(const std::string &value);

// Validates every entry that applies to `entity` against `specs`: unknown
// keys and bad values are collected into one error, one line per problem.
Status validate_config(const Config &cfg, const std::string &entity,
                       const std::vector<const strata_option_spec *> &specs);

// The value of `key` for `entity`, else the spec's default, else "".
std::string config_value(const Config &cfg, const std::string &entity,
                         const strata_option_spec &spec);

}  // namespace strata
