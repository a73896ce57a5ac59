#!/usr/bin/env bash
# The older `claude` CLIs of the CI version matrix (issue 13), each from the
# claude-agent-sdk wheel that bundles it, installed once into
# /var/cache/claude-bridge/cli-<version>/ (kept between CI runs) with a `claude`
# link at its top. The newest CLI comes with the test extra itself.
#
#   scripts/test-deps.d/cli-matrix.sh           install what is missing (idempotent)
#   scripts/test-deps.d/cli-matrix.sh --paths   print "<version> <path to claude>" per CLI
set -euo pipefail

# CLI version -> the claude-agent-sdk release that bundles it.
MATRIX=(
    "2.1.176 0.2.100"
    "2.1.257 0.2.150"
)
cache="${CLAUDE_BRIDGE_CACHE:-/var/cache/claude-bridge}"
export PIP_ROOT_USER_ACTION=ignore

if [ "${1:-}" = "--paths" ]; then
    for entry in "${MATRIX[@]}"; do
        read -r cli _ <<<"$entry"
        echo "$cli $cache/cli-$cli/claude"
    done
    exit 0
fi

mkdir -p "$cache"
for entry in "${MATRIX[@]}"; do
    read -r cli sdk <<<"$entry"
    dir="$cache/cli-$cli"
    if [ "$("$dir/claude" --version 2>/dev/null | cut -d' ' -f1)" = "$cli" ]; then
        continue
    fi
    tmp="$(mktemp -d "$cache/.cli-$cli.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    chmod 755 "$tmp"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --dest "$tmp/wheel" "claude-agent-sdk==$sdk"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
        --target "$tmp/pkg" "$tmp"/wheel/claude_agent_sdk-*.whl
    rm -rf "$tmp/wheel"
    ln -s pkg/claude_agent_sdk/_bundled/claude "$tmp/claude"
    v="$("$tmp/claude" --version | cut -d' ' -f1)"
    if [ "$v" != "$cli" ]; then
        echo "cli-matrix.sh: claude-agent-sdk==$sdk bundles claude $v, not $cli" >&2
        exit 1
    fi
    rm -rf "$dir"
    mv "$tmp" "$dir"
    trap - EXIT
done
