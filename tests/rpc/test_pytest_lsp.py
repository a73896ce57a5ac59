"""The bridge driven by pytest-lsp: a stock pygls ``JsonRPCClient`` over Content-Length.

This is how an LSP-speaking host sees the bridge. The client (see
:class:`~tests.rpc.clients.LspTestClient`) validates every message against the
contract. pytest-lsp's teardown waits for the server process to exit, so the
fixture ends the connection itself: ``shutdown``, ``exit`` and closing the
bridge's stdin (without the last, pytest-lsp's example hangs when a test fails
before ``exit``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from bridge import __version__
from bridge.rpc.schema.contract import ContractValidator
from bridge.testing.procs import alive

from .clients import BRIDGE_CMD, ROOT, LspTestClient

pytestmark = [pytest.mark.rpc, pytest.mark.asyncio]

WAIT = 20.0
_ids = iter(range(1, 1_000_000))


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    config=ClientServerConfig(
        server_command=BRIDGE_CMD,
        client_factory=LspTestClient,
        server_env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
)
async def lsp_client(client: LspTestClient) -> AsyncIterator[None]:
    client.set_validator(ContractValidator())

    @client.feature("session/requestPermission")  # type: ignore[untyped-decorator]
    async def on_permission(params: Any) -> Any:
        answers = client.permission_answers
        return answers.pop(0) if answers else {"behavior": "deny", "message": "no answer"}

    yield
    server = client.server_process
    if server.returncode is None:
        try:
            with anyio.fail_after(WAIT):
                await call(client, "shutdown", None)
            client.protocol.notify("exit", None)
        except Exception:  # the test's failure is what matters; still end the bridge
            pass
        if server.stdin is not None:
            server.stdin.close()
    with anyio.fail_after(WAIT):
        await server.wait()
    assert client.violations == []
    assert server.stderr is not None
    stderr = await server.stderr.read()
    assert stderr == b"", stderr


async def call(client: LspTestClient, method: str, params: Any, *, valid: bool = True) -> Any:
    """Send a request through pygls; the raw JSON ``result`` of its response.

    pygls would hand back the result as namedtuples; the raw message is read
    from what the client recorded (keys like ``stderrTail`` stay as they are).
    ``valid=False``: the request is bad input on purpose (the contract must reject it).
    """
    msg_id = next(_ids)
    if valid:
        future = client.protocol.send_request_async(method, params, msg_id=msg_id)
    else:
        with client.invalid_on_purpose():
            future = client.protocol.send_request_async(method, params, msg_id=msg_id)
    with anyio.fail_after(WAIT):
        await future
    [response] = [m for m in client.raw if m.get("id") == msg_id and "method" not in m]
    return response["result"]


async def error_of(
    client: LspTestClient, method: str, params: Any, *, valid: bool = True
) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await call(client, method, params, valid=valid)
    return info.value


async def test_initialize_and_exit(lsp_client: LspTestClient) -> None:
    result = await call(
        lsp_client,
        "initialize",
        {"processId": None, "capabilities": {}, "clientInfo": {"name": "pytest-lsp"}},
    )
    assert result["serverInfo"] == {"name": "claude-duplex-bridge", "version": __version__}
    assert result["protocolVersion"] == "1.0"
    lsp_client.protocol.notify("initialized", {})
    assert await call(lsp_client, "session/list", None) == {"sessions": []}
    assert await call(lsp_client, "shutdown", None) is None
    lsp_client.protocol.notify("exit", None)
    server = lsp_client.server_process
    with anyio.fail_after(WAIT):
        assert await server.wait() == 0


async def test_a_conversation_with_a_permission(lsp_client: LspTestClient, tmp_path: Path) -> None:
    from bridge.testing.fake_cli import write_fake_cli

    cli = write_fake_cli(tmp_path / "cli")
    work = tmp_path / "work"
    work.mkdir()
    await call(
        lsp_client,
        "initialize",
        {"processId": None, "capabilities": {}, "initializationOptions": {"permissions": True}},
    )
    lsp_client.protocol.notify("initialized", {})
    created = await call(lsp_client, "session/create", {"cwd": str(work), "claudePath": str(cli)})
    sid = created["sessionId"]

    result = await call(lsp_client, "session/send", {"sessionId": sid, "prompt": "hello lsp"})
    assert result["text"] == "Echo: hello lsp"
    events = [n["params"] for n in lsp_client.notifications("session/event")]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["sessionId"] for e in events} == {sid}

    lsp_client.permission_answers.append({"behavior": "allow"})
    result = await call(lsp_client, "session/send", {"sessionId": sid, "prompt": "USE_BASH"})
    assert result["text"] == "Tool finished: hello-from-bash"
    assert (work / "made-by-bash").exists()
    requests = [m for m in lsp_client.raw if m.get("method") == "session/requestPermission"]
    assert len(requests) == 1 and requests[0]["params"]["toolName"] == "Bash"

    closed = await call(lsp_client, "session/close", {"sessionId": sid})
    assert closed["reaped"] is True
    assert closed["exitStatus"]["state"] == "completed"
    assert [n["params"]["reason"] for n in lsp_client.notifications("session/exited")] == ["closed"]


async def test_errors_reach_pygls_as_json_rpc_errors(lsp_client: LspTestClient) -> None:
    await call(lsp_client, "initialize", {"capabilities": {}})
    error = await error_of(lsp_client, "session/status", {"sessionId": "nope"})
    assert error.code == -31001
    error = await error_of(lsp_client, "session/send", {"sessionId": "nope"}, valid=False)
    assert error.code == -32602
    # still serving
    assert await call(lsp_client, "session/list", {}) == {"sessions": []}


async def test_stdin_closed_mid_session_ends_the_bridge(
    lsp_client: LspTestClient, tmp_path: Path
) -> None:
    """What a crashed editor does: the bridge notices end of input and exits cleanly."""
    from bridge.testing.fake_cli import write_fake_cli

    cli = write_fake_cli(tmp_path / "cli")
    await call(lsp_client, "initialize", {"capabilities": {}})
    created = await call(
        lsp_client, "session/create", {"cwd": str(tmp_path), "claudePath": str(cli)}
    )
    server = lsp_client.server_process
    assert server.stdin is not None
    server.stdin.close()
    with anyio.fail_after(5):
        assert await server.wait() == 0
    assert not alive(created["pid"])
