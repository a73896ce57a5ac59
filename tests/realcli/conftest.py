"""Fixtures of the real-CLI suite. ``make_options`` and ``open_session`` (and record mode,
``BRIDGE_RECORD_DIR``) live in ``tests/conftest.py``: the unit specs run against the real
CLI too, through the ``cli`` fixture."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Real-CLI tests run on asyncio; a test widens this with its own parametrize."""
    return "asyncio"
