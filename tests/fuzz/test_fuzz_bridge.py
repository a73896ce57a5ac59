"""Fuzzing the live bridge: arbitrary bytes in both framings, random JSON-RPC messages.

After every example the bridge must still answer a valid request, have written
nothing to stderr, and stay under a memory bound; when the test ends it must
exit cleanly and leave no process behind (the ``live_bridge`` fixture).
The fast profile runs in the normal suite; ``BRIDGE_FUZZ=long`` runs thousands
of examples (see ``conftest.py``).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.rpc import wire

from .conftest import MAX_RSS_MIB, PROFILE, TIMEOUT
from .harness import LiveBridge

pytestmark = [pytest.mark.fuzz, pytest.mark.timeout(TIMEOUT)]

# --------------------------------------------------------------------------- bytes

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_FRAGMENTS = st.one_of(
    st.binary(max_size=64),
    st.sampled_from(
        [
            b"Content-Length: ",
            b"content-length:",
            b"Content-Type: application/json\r\n",
            b"\r\n",
            b"\n",
            b"\r\n\r\n",
            b"\xef\xbb\xbf",
            b"{",
            b"}",
            b'"',
            b"\\u",
            b"\\ud800",
            b"[" * 3000,
            b'{"jsonrpc": "2.0", "id": 1, "method": "session/list"}',
            b'{"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}',
            b'{"jsonrpc": "2.0", "id": true, "result": {}}',
        ]
    ),
    st.integers(-5, 200_000).map(lambda n: b"Content-Length: %d\r\n" % n),
    _JSON.map(lambda v: json.dumps(v).encode()),
)
_STREAM = st.lists(_FRAGMENTS, max_size=12).map(b"".join)


def _send_split(bridge: LiveBridge, data: bytes, cuts: list[int]) -> None:
    """Write ``data`` in pieces cut at the given offsets."""
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    for start, end in itertools.pairwise(points):
        bridge.send(data[start:end])


def _still_healthy(bridge: LiveBridge) -> None:
    """A valid request is answered (after at most one more, which bytes in flight may
    swallow: the framing resynchronises on the next header); no stderr; RSS bounded."""
    bridge.send(b"\n" if bridge.framing == "ndjson" else b"\r\n")
    bridge.start_request("session/list")
    last = bridge.start_request("session/list")
    assert "result" in bridge.response(last)
    assert bytes(bridge.stderr) == b""
    assert bridge.rss_mib() < MAX_RSS_MIB


@pytest.mark.parametrize("live_bridge", ["content-length", "ndjson"], indirect=True)
@PROFILE
@given(data=_STREAM, cuts=st.lists(st.integers(min_value=0), max_size=6))
def test_arbitrary_bytes_never_stop_the_bridge(
    live_bridge: LiveBridge, data: bytes, cuts: list[int]
) -> None:
    _send_split(live_bridge, data, cuts)
    _still_healthy(live_bridge)


# --------------------------------------------------------------------------- messages

_CLIENT_METHODS = [
    m
    for m in wire.METHODS
    if m.direction in ("clientToServer", "both") and m.name not in ("shutdown", "exit")
]
_IDS = st.one_of(st.integers(), st.text(max_size=10), st.none(), st.booleans(), st.floats(), _JSON)


def _field_names(params_type: Any) -> list[str]:
    if params_type is None:
        return []
    import msgspec

    return [f.encode_name for f in msgspec.structs.fields(params_type)]


@st.composite
def _messages(draw: st.DrawFn, session_ids: list[str], cli: str, cwd: str) -> dict[str, Any]:
    method = draw(st.sampled_from(_CLIENT_METHODS))
    names = _field_names(method.params)
    params: Any = draw(
        st.one_of(
            _JSON,
            st.dictionaries(
                st.sampled_from(names) if names else st.text(max_size=8), _JSON, max_size=5
            ),
        )
    )
    if isinstance(params, dict):
        if "sessionId" in names and draw(st.booleans()):
            # an index, not sampled_from: the live sessions differ between runs of an example
            params["sessionId"] = session_ids[draw(st.integers(0, 7)) % len(session_ids)]
        if method.name == "session/create":  # spawn only the fake CLI, in a real directory
            params.update(cwd=cwd, claudePath=cli)
            params.pop("extraArgs", None)
            params.pop("resume", None)
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "1.0"]))}
    if draw(st.booleans()):
        message["method"] = method.name
    else:
        message["method"] = draw(st.sampled_from([method.name, "$/cancelRequest"]))
    if draw(st.integers(0, 4)):
        message["params"] = params
    if method.kind == "request" or draw(st.booleans()):
        message["id"] = draw(_IDS)
    if draw(st.integers(0, 3)) == 0:  # a reply to a request the bridge never sent
        message = {
            "jsonrpc": "2.0",
            "id": draw(_IDS),
            draw(st.sampled_from(["result", "error"])): params,
        }
    return message


@pytest.mark.parametrize("live_bridge", ["content-length", "ndjson"], indirect=True)
@PROFILE
@given(data=st.data())
def test_random_messages_of_every_method(live_bridge: LiveBridge, data: st.DataObject) -> None:
    bridge = live_bridge
    listed = bridge.call("session/list")["sessions"]
    sessions = [s["sessionId"] for s in listed if s["state"] != "exited"]
    if not sessions:  # one live session for the messages to aim at
        created = bridge.call(
            "session/create", {"cwd": str(bridge.cwd), "claudePath": str(bridge.cli)}
        )
        sessions = [created["sessionId"]]
    sessions += [s["sessionId"] for s in listed if s["state"] == "exited"][-1:]
    for _ in range(data.draw(st.integers(1, 4))):
        message = data.draw(_messages([*sessions, "s999-nope"], str(bridge.cli), str(bridge.cwd)))
        bridge.send(bridge.frame(message))
    _still_healthy(bridge)
    # keep the process count bounded: close what the example left running
    for status in bridge.call("session/list")["sessions"]:
        if status["state"] != "exited":
            bridge.call("session/close", {"sessionId": status["sessionId"]})
