#!/usr/bin/env bash
# What the Neovim suite (tests/editors/neovim, marker `neovim`) needs beyond the Python
# test extra (which brings Neovim 0.12 and pynvim): tmux, for the tests that read the
# real screen of a Neovim in a terminal, and git, which vim.pack installs the plugin
# with. Quick and silent when both are there.
set -euo pipefail
if command -v tmux >/dev/null && command -v git >/dev/null; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends tmux git >/dev/null
tmux -V
