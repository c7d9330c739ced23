#!/usr/bin/env bash
# exports_only_entry.sh PLUGIN.so
# Passes when the plugin's dynamic symbol table defines exactly one symbol,
# the ABI entry point (STYLE.md: "Plugins built with hidden visibility,
# exporting only the entry point").
set -euo pipefail
plugin=$1
entry=strata_plugin_entry_v1
[ -f "$plugin" ] || { echo "no such plugin file: $plugin" >&2; exit 1; }
exported=$(nm -D --defined-only "$plugin" | awk 'NF >= 3 { print $3 }' | sort -u)
if [ "$exported" != "$entry" ]; then
  echo "$plugin must export only $entry, but exports:" >&2
  echo "$exported" | sed 's/^/  /' >&2
  exit 1
fi
echo "$plugin exports only $entry"
