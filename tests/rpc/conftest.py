"""Fixtures of the end-to-end suite: a real ``python -m bridge serve`` subprocess per test.

``open_bridge(...)`` starts the bridge and yields a connected :class:`RawClient`
(framing from the ``framing`` parameter unless given). Every message either side
sends goes through the contract validator; when the client closes, the test
fails on any protocol violation and on any byte the bridge wrote to stderr.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bridge.fakes import FakeMessagesAPI
from bridge.rpc.schema.contract import ContractValidator

from .clients import Framing, RawClient, RequestHandler

OpenBridge = Callable[..., AbstractAsyncContextManager[RawClient]]

REAL_WAIT = 60.0  # bound of a call that waits on the real CLI through the bridge


@pytest.fixture
def anyio_backend() -> str:
    """The bridge runs in its own process; the tests' side runs on asyncio."""
    return "asyncio"


@pytest.fixture(scope="session")
def validator() -> ContractValidator:
    """The contract: the JSON Schema generated from ``bridge/rpc/wire/``."""
    return ContractValidator()


@pytest.fixture(params=["content-length", "ndjson"])
def framing(request: pytest.FixtureRequest) -> Framing:
    """Core scenarios run in both framings."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def open_bridge(validator: ContractValidator, request: pytest.FixtureRequest) -> OpenBridge:
    """``async with open_bridge(framing=..., args=..., on_request=...) as client``.

    ``framing`` defaults to the test's ``framing`` parameter (Content-Length when the
    test has none). On exit: no protocol violation, and the bridge's stderr is empty
    unless ``allow_stderr``.
    """

    @asynccontextmanager
    async def open_(
        *,
        framing: Framing | None = None,
        args: Sequence[str] = (),
        on_request: RequestHandler | None = None,
        env: Mapping[str, str] | None = None,
        allow_stderr: bool = False,
    ) -> AsyncIterator[RawClient]:
        if framing is None:
            framing = (
                request.getfixturevalue("framing")
                if "framing" in request.fixturenames
                else "content-length"
            )
        assert framing is not None
        async with RawClient.start(
            framing, validator, args=args, env=env, on_request=on_request
        ) as client:
            yield client
        client.check()
        if not allow_stderr:
            assert client.stderr == b"", f"the bridge wrote to stderr: {bytes(client.stderr)!r}"

    return open_


def session_params(cli: Path, cwd: Path, **extra: Any) -> dict[str, Any]:
    """``session/create`` params running ``cli`` in ``cwd``."""
    return {"cwd": str(cwd), "claudePath": str(cli), **extra}


async def allow(method: str, params: Any) -> Any:
    """An ``on_request`` answer that allows every permission request."""
    return {"behavior": "allow"}


def user_texts(api: FakeMessagesAPI, index: int) -> list[str]:
    """The user-side texts (prompts and tool results) of the ``index``-th main request the
    fake API received, the CLI's ``<system-reminder>`` blocks left out."""
    texts = []
    for message in api.messages_requests()[index].body["messages"]:
        if message.get("role") != "user":
            continue
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for b in blocks:
            if b.get("type") == "text" and not b["text"].lstrip().startswith("<system-reminder>"):
                texts.append(b["text"])
            elif b.get("type") == "tool_result":
                inner = b.get("content")
                texts.append(inner if isinstance(inner, str) else json.dumps(inner))
    return texts
