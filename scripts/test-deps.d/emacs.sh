#!/usr/bin/env bash
# Emacs 28.2 (Debian 12's emacs-nox), package-lint (elpa-package-lint) and markdown-mode
# (elpa-markdown-mode, which the chat buffer derives from when it is installed) for the
# Emacs suite (tests/editors/emacs, marker `emacs`). Quick and silent when all are there.
set -euo pipefail
if emacs --version 2>/dev/null | head -n 1 | grep -qx 'GNU Emacs 28.2' \
    && compgen -G '/usr/share/emacs/site-lisp/elpa/package-lint-*/package-lint.el' >/dev/null \
    && compgen -G '/usr/share/emacs/site-lisp/elpa/markdown-mode-*/markdown-mode.el' >/dev/null; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends emacs-nox elpa-package-lint \
    elpa-markdown-mode >/dev/null
emacs --version | head -n 1
