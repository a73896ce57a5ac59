#!/usr/bin/env bash
# The ACP suite's npm pieces, in /var/cache/claude-bridge/acp (kept between CI runs):
# @agentclientprotocol/sdk (its schema/v1/schema.json validates every line the agent
# writes), acpx (the smoke test) and @agentclientprotocol/claude-agent-acp (the
# benchmark's baseline). Without Node this does nothing: those tests say why they skip.
set -euo pipefail
if ! command -v npm >/dev/null 2>&1; then
    echo "acp.sh: npm not found; the acpx smoke test and the JSON-schema check will skip" >&2
    exit 0
fi
prefix=/var/cache/claude-bridge/acp
want="@agentclientprotocol/sdk@2.4.0 acpx@0.19.1 @agentclientprotocol/claude-agent-acp@0.49.0"
stamp="$prefix/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
mkdir -p "$prefix"
# shellcheck disable=SC2086
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error $want
echo "$want" > "$stamp"
