"""The wire's constants for each editor plugin, generated so no plugin copies them by hand.

One small file per editor, a pure function of :mod:`bridge.rpc.wire` (like the rest
of ``schema/``):

``neovim/lua/claude_bridge/protocol.lua``   a Lua table
``emacs/claude-bridge-protocol.el``         ``defconst`` forms
``vscode/src/constants.ts``                 ``as const`` objects

Each holds the protocol version, every error code by name (the client-side
``ConnectionClosed`` included: what a plugin reports when the bridge is gone),
the permission modes with what each does, the event types and the method names.
``claude-bridge schema`` writes them beside ``schema/`` when the ``editors/``
directory is there, and ``--check`` fails when they drift.
"""

from __future__ import annotations

import json
import re
import textwrap

from bridge.rpc import wire

from .build import event_tag, event_types

__all__ = ["EDITOR_FILES", "generate_editor_files"]

LUA_FILE = "neovim/lua/claude_bridge/protocol.lua"
ELISP_FILE = "emacs/claude-bridge-protocol.el"
TS_FILE = "vscode/src/constants.ts"
EDITOR_FILES = (LUA_FILE, ELISP_FILE, TS_FILE)
"""The generated files, relative to the ``editors/`` directory."""

_SOURCE = "Generated from bridge/rpc/wire/ by `claude-bridge schema`.  Do not edit."


def _errors() -> list[tuple[str, int, str]]:
    return [(name, code, doc) for code, (name, doc) in wire.ERRORS.items()]


def _methods() -> list[tuple[str, str, str]]:
    return [(m.name, m.direction, m.kind) for m in wire.METHODS]


def _events() -> list[str]:
    return [event_tag(cls) for cls in event_types()]


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _str(text: str) -> str:
    """A string literal Lua, Emacs Lisp and TypeScript all read the same way."""
    return json.dumps(text, ensure_ascii=False)


def _lua() -> str:
    out = [
        f"-- {_SOURCE}",
        "-- The bridge's wire constants: :help claude_bridge-protocol.",
        "local M = {}",
        "",
    ]
    out.append(f"M.PROTOCOL_VERSION = {_str(wire.PROTOCOL_VERSION)}")
    out += ["", "--- Error codes by name.", "M.errors = {"]
    out += [f"  {name} = {code}," for name, code, _ in _errors()]
    out += ["}", "", "--- Error names by code.", "M.error_names = {"]
    out += [f"  [{code}] = {_str(name)}," for name, code, _ in _errors()]
    out += [
        "}",
        "",
        "--- The permission modes, in order, with what each does.",
        "M.permission_modes = {",
    ]
    out += [
        f"  {{ name = {_str(mode)}, description = {_str(doc)} }},"
        for mode, doc in wire.PERMISSION_MODES.items()
    ]
    out += ["}", "", "--- Every session/event type.", "M.event_types = {"]
    out += [f"  {_str(tag)}," for tag in _events()]
    out += ["}", "", "--- Every method: name, direction, kind.", "M.methods = {"]
    out += [
        f"  {{ name = {_str(name)}, direction = {_str(direction)}, kind = {_str(kind)} }},"
        for name, direction, kind in _methods()
    ]
    out += ["}", "", "return M", ""]
    return "\n".join(out)


def _elisp_doc(first: str, rest: str) -> str:
    """A docstring checkdoc accepts: a first line of its own, the rest wrapped."""
    body = textwrap.fill(rest.replace("`", "'").replace('"', "'"), 70)
    return _str(f"{first}\n{body}")


def _elisp() -> str:
    out = [
        ";;; claude-bridge-protocol.el --- The bridge's wire constants"
        "  -*- lexical-binding: t; -*-",
        "",
        ";; SPDX-License-Identifier: MIT",
        "",
        ";;; Commentary:",
        "",
        f";; {_SOURCE}",
        ";; Error codes, permission modes, event types and method names of the",
        ";; bridge's JSON-RPC protocol (schema/PROTOCOL.md).",
        "",
        ";;; Code:",
        "",
        f"(defconst claude-bridge-protocol-version {_str(wire.PROTOCOL_VERSION)}",
        '  "The protocol version this package was generated for.")',
        "",
    ]
    for name, code, doc in _errors():
        out += [
            f"(defconst claude-bridge-protocol-error-{_kebab(name)} {code}",
            f"  {_elisp_doc(f'Error code {name}.', doc)})",
            "",
        ]
    out.append("(defconst claude-bridge-protocol-error-names")
    out.append(
        "  '(" + "\n    ".join(f"({code} . {_str(name)})" for name, code, _ in _errors()) + ")"
    )
    out += ['  "Error names by code.")', ""]
    out.append("(defconst claude-bridge-protocol-permission-modes")
    out.append(
        "  '("
        + "\n    ".join(
            f"({_str(mode)} . {_str(doc)})" for mode, doc in wire.PERMISSION_MODES.items()
        )
        + ")"
    )
    out += ['  "The permission modes, in order, with what each does.")', ""]
    out.append("(defconst claude-bridge-protocol-event-types")
    out.append("  '(" + "\n    ".join(_str(tag) for tag in _events()) + ")")
    out += ['  "Every session/event type.")', ""]
    out.append("(defconst claude-bridge-protocol-methods")
    out.append(
        "  '("
        + "\n    ".join(
            f"({_str(name)} {_str(direction)} {_str(kind)})" for name, direction, kind in _methods()
        )
        + ")"
    )
    out += [
        '  "Every method: name, direction, kind.")',
        "",
        "(provide 'claude-bridge-protocol)",
        ";;; claude-bridge-protocol.el ends here",
        "",
    ]
    return "\n".join(out)


def _ts() -> str:
    out = [
        f"/* {_SOURCE} */",
        "",
        f"export const PROTOCOL_VERSION = {_str(wire.PROTOCOL_VERSION)};",
        "",
    ]
    out += ["/** Error codes by name. */", "export const ErrorCodes = {"]
    out += [f"  {name}: {code}," for name, code, _ in _errors()]
    out += ["} as const;", ""]
    out += [
        "/** The permission modes, in order, with what each does. */",
        "export const PERMISSION_MODES = [",
    ]
    out += [
        f"  {{ name: {_str(mode)}, description: {_str(doc)} }},"
        for mode, doc in wire.PERMISSION_MODES.items()
    ]
    out += ["] as const;", "", "/** Every session/event type. */", "export const EVENT_TYPES = ["]
    out += [f"  {_str(tag)}," for tag in _events()]
    out += [
        "] as const;",
        "",
        "/** Every method: name, direction, kind. */",
        "export const METHODS = [",
    ]
    out += [
        f"  {{ name: {_str(name)}, direction: {_str(direction)}, kind: {_str(kind)} }},"
        for name, direction, kind in _methods()
    ]
    out += ["] as const;", ""]
    return "\n".join(out)


def generate_editor_files() -> dict[str, bytes]:
    """Every generated editor file, by path relative to ``editors/``."""
    return {
        LUA_FILE: _lua().encode(),
        ELISP_FILE: _elisp().encode(),
        TS_FILE: _ts().encode(),
    }
