"""Hypothesis profiles of the fuzz suite.

``BRIDGE_FUZZ=long python -m pytest -m fuzz`` runs the long profile (thousands
of examples, minutes); the default fast profile runs in the normal suite.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from .harness import Framing, LiveBridge

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    "database": None,
}
settings.register_profile("bridge-fuzz-fast", max_examples=60, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("bridge-fuzz-long", max_examples=3000, **_COMMON)  # type: ignore[arg-type]
LONG = os.environ.get("BRIDGE_FUZZ") == "long"
PROFILE = settings.get_profile("bridge-fuzz-long" if LONG else "bridge-fuzz-fast")
"""The settings every fuzz test runs with."""
TIMEOUT = 0 if LONG else 120
"""pytest-timeout per test: none for the long profile."""

MAX_RSS_MIB = 300.0
"""The bridge's RSS after any example (it starts near 45 MiB)."""


@pytest.fixture
def live_bridge(
    request: pytest.FixtureRequest, fake_cli: Path, tmp_path: Path
) -> Iterator[LiveBridge]:
    """An initialized bridge in the framing of the test's ``framing`` parameter (one per
    test, shared by its examples); on teardown it must exit cleanly, leaving no process."""
    framing: Framing = getattr(request, "param", "content-length")
    workdir = tmp_path / "work"
    workdir.mkdir()
    bridge = LiveBridge(framing, fake_cli, workdir.resolve(), ["--max-message-bytes", "65536"])
    try:
        bridge.call("initialize", {"capabilities": {}})
        yield bridge
    finally:
        code = bridge.close()
    assert code == 0
    assert bytes(bridge.stderr) == b""
