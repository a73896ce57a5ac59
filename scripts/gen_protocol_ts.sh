#!/usr/bin/env bash
# Generate editors/vscode/src/protocol.ts from schema/bridge.schema.json with the
# json-schema-to-typescript version pinned in editors/vscode/package-lock.json.
#
#   scripts/gen_protocol_ts.sh [SCHEMA [OUT]]
#
# Defaults: schema/bridge.schema.json -> editors/vscode/src/protocol.ts. The output
# depends only on the schema and the locked tool, so CI regenerates it and compares
# (tests/test_schema.py). Run `claude-bridge schema` first when bridge/rpc/wire/ changed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
schema="$(cd "$(dirname "${1:-$root/schema/bridge.schema.json}")" && pwd)/$(basename "${1:-bridge.schema.json}")"
out="${2:-$root/editors/vscode/src/protocol.ts}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

cd "$root/editors/vscode"
pinned="$(node -p "require('./package.json').devDependencies['json-schema-to-typescript']")"
installed="$(node -p "try { require('json-schema-to-typescript/package.json').version } catch { '' }")"
if [ "$installed" != "$pinned" ]; then
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
fi

banner='/* Generated from schema/bridge.schema.json by scripts/gen_protocol_ts.sh
 * (json-schema-to-typescript '"$pinned"'). Do not edit: change bridge/rpc/wire/,
 * run `claude-bridge schema`, then `npm run gen:protocol`. */'

tmp="$(mktemp "${TMPDIR:-/tmp}/protocol.XXXXXX.ts")"
trap 'rm -f "$tmp"' EXIT
node_modules/.bin/json2ts \
    --input "$schema" \
    --output "$tmp" \
    --unreachableDefinitions \
    --additionalProperties=false \
    --unknownAny \
    --bannerComment "$banner"
mkdir -p "$(dirname "$out")"
cp "$tmp" "$out"
