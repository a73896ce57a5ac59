#!/usr/bin/env bash
# Emacs 28.2 (Debian 12's emacs-nox), package-lint (elpa-package-lint), markdown-mode
# (elpa-markdown-mode, the chat buffer's major mode when it is installed) and tmux (the
# suite types into a real `emacs -nw` on a tmux pane) for the Emacs suite
# (tests/editors/emacs, marker `emacs`). Quick and silent when all are there.
set -euo pipefail
if emacs --version 2>/dev/null | head -n 1 | grep -qx 'GNU Emacs 28.2' \
    && compgen -G '/usr/share/emacs/site-lisp/elpa/package-lint-*/package-lint.el' >/dev/null \
    && compgen -G '/usr/share/emacs/site-lisp/elpa/markdown-mode-*/markdown-mode.el' >/dev/null \
    && command -v tmux >/dev/null; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends emacs-nox elpa-package-lint \
    elpa-markdown-mode tmux >/dev/null
emacs --version | head -n 1
