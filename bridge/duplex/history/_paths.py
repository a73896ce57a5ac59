"""Where the CLI keeps transcripts: the config directory, the encoded cwd, one file."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from ..errors import TranscriptNotFound

__all__ = [
    "MAX_ENCODED",
    "UUID",
    "config_dir",
    "encode_cwd",
    "project_dir",
    "transcript_path",
]

MAX_ENCODED = 200
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's config directory: ``$CLAUDE_CONFIG_DIR``, else ``$HOME/.claude``.

    ``env`` defaults to this process's environment; pass the environment the CLI
    runs with to find the directory it writes to.
    """
    source = os.environ if env is None else env
    explicit = source.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return Path(unicodedata.normalize("NFC", explicit))
    home = source.get("HOME") or str(Path.home())
    return Path(unicodedata.normalize("NFC", str(Path(home) / ".claude")))


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """The directory name the CLI keeps a cwd's transcripts under.

    Every character but ASCII letters and digits becomes ``-``; a name longer than 200
    characters is cut to 200 and suffixed with ``-`` and a hash of the path (the 32-bit
    string hash the CLI uses, in base 36).
    """
    text = str(cwd)
    encoded = _NON_ALNUM.sub("-", text)
    if len(encoded) <= MAX_ENCODED:
        return encoded
    return f"{encoded[:MAX_ENCODED]}-{_hash36(text)}"


def _hash36(text: str) -> str:
    h = 0
    for ch in text:  # JavaScript's `h = (h << 5) - h + code; h |= 0` over UTF-16 units
        for unit in _utf16_units(ch):
            h = ((h << 5) - h + unit) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    n = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        out = digits[n % 36] + out
        n //= 36
        if n == 0:
            return out


def _utf16_units(ch: str) -> tuple[int, ...]:
    code = ord(ch)
    if code < 0x10000:
        return (code,)
    code -= 0x10000
    return (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _canonical(cwd: str | os.PathLike[str]) -> str:
    try:
        return unicodedata.normalize("NFC", os.path.realpath(cwd))
    except OSError:
        return unicodedata.normalize("NFC", str(cwd))


def project_dir(cwd: str | os.PathLike[str], config: Path | None) -> Path | None:
    """The existing directory of ``cwd``'s transcripts, or None.

    A long path's hash suffix differs between CLI builds (older ones used another
    hash), so a long name is also matched by its 200-character prefix.
    """
    projects = (config if config is not None else config_dir()) / "projects"
    name = encode_cwd(_canonical(cwd))
    exact = projects / name
    if exact.is_dir():
        return exact
    if len(name) <= MAX_ENCODED:
        return None
    prefix = name[:MAX_ENCODED] + "-"
    try:
        for entry in sorted(projects.iterdir()):
            if entry.name.startswith(prefix) and entry.is_dir():
                return entry
    except OSError:
        pass
    return None


def transcript_path(
    cwd: str | os.PathLike[str], claude_session_id: str, *, config_dir: Path | None = None
) -> Path:
    """The file of one transcript; raises :class:`TranscriptNotFound`."""
    if not UUID.match(claude_session_id):
        raise TranscriptNotFound(claude_session_id, str(cwd))
    project = project_dir(cwd, config_dir)
    if project is not None:
        path = project / f"{claude_session_id}.jsonl"
        if path.is_file():
            return path
    raise TranscriptNotFound(claude_session_id, str(cwd))
