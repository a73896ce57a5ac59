"""What the bridge knows of the CLI executables it runs: versions, capabilities, warnings.

The default CLI is probed (:func:`bridge.duplex.probe_version`) as the bridge starts,
so that ``initialize`` can name it; every other executable is probed once per file
(a CLI updated in place is probed again) while its first session spawns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from bridge import duplex, timeouts
from bridge.duplex import (
    FALLBACKS,
    MIN_CLI_VERSION,
    CliFeatures,
    version_supported,
)

from . import wire

__all__ = ["CliCatalog", "KnownCli"]

log = logging.getLogger("bridge.rpc")


@dataclass
class KnownCli:
    """What the bridge learned of one CLI executable."""

    version: str | None = None
    seen: CliFeatures | None = None
    """The capabilities a session of this executable showed (all its sessions share them)."""
    probed: anyio.Event = field(default_factory=anyio.Event)
    warned: bool = False


class CliCatalog:
    """The CLI executables of one bridge, keyed by path, modification time and size."""

    def __init__(self, claude_path: str | None, log_message: Callable[[int, str], None]) -> None:
        self._claude_path = claude_path
        self._log_message = log_message
        self._clis: dict[tuple[str, int, int], KnownCli] = {}
        self.default_path: str | None = None
        """The CLI a session without ``claudePath`` runs (None: none was found)."""
        self.default_version: str | None = None
        self.default_probed = anyio.Event()

    async def probe_default(self) -> None:
        """Find the default CLI and read its version (set :attr:`default_probed` after)."""
        try:
            path = duplex.find_cli(self._claude_path)
        except duplex.CliNotFound:
            self.default_probed.set()
            return
        self.default_path = str(path)
        known = await self.known(self.default_path)
        self.default_version = known.version
        self.default_probed.set()

    async def known(self, path: str) -> KnownCli:
        """What the bridge knows of the executable at ``path`` (its version is read once
        per file: a CLI updated in place is read again)."""
        try:
            stat = await anyio.Path(path).stat()
            key = (path, stat.st_mtime_ns, stat.st_size)
        except OSError:
            key = (path, 0, 0)
        known = self._clis.get(key)
        if known is None:
            known = self._clis[key] = KnownCli()
            known.version = await duplex.probe_version(path)
            known.probed.set()
        with anyio.move_on_after(timeouts.CLI_PROBE):
            await known.probed.wait()
        return known

    def by_path(self, path: str) -> KnownCli | None:
        """The latest record of ``path`` (for ``initialize``, which does not stat it)."""
        found = [known for (p, _, _), known in self._clis.items() if p == path]
        return found[-1] if found else None

    def warn_if_unsupported(self, path: str, known: KnownCli | None) -> None:
        """Say once per executable, in the log and to the client, that it is too old."""
        if known is None or known.warned or version_supported(known.version) is not False:
            return
        known.warned = True
        message = (
            f"claude {known.version} at {path} is older than the oldest supported CLI "
            f"({MIN_CLI_VERSION}): it runs, untested. Without the capabilities it does not "
            "advertise: " + "; ".join(FALLBACKS.values()) + "."
        )
        log.warning("%s", message)
        self._log_message(2, message)

    @staticmethod
    def info(
        path: str, known: KnownCli | None, session: duplex.DuplexSession | None = None
    ) -> wire.CliInfo:
        """``CliInfo`` of a CLI: the session's own capabilities once its first turn showed
        them, else those an earlier session of the same executable showed."""
        features = session.features if session is not None else None
        if features is not None and features.known:
            caps, legacy = features.capabilities, features.legacy
        elif known is not None and known.seen is not None:
            caps, legacy = known.seen.capabilities, known.seen.legacy
        else:
            caps, legacy = None, None
        version = known.version if known is not None else None
        if version is None and features is not None:
            version = features.version
        return wire.CliInfo(
            path=path,
            version=version,
            supported=version_supported(version),
            capabilities=list(caps) if caps is not None else None,
            legacy=legacy,
        )
