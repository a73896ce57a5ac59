"""The HTTP side of the fake Messages API: the request handler, SSE events, JSON messages."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from .bodies import SUBAGENT_ID_HEADER, RecordedRequest, RequestKind
from .scripts import ApiError, Reply, Script, Text, Thinking, ToolUse, script_from_json

if TYPE_CHECKING:
    from .messages_api import FakeMessagesAPI


def is_final(status: int) -> bool:
    """Whether the CLI gives up on this HTTP status (its SDK retries 408, 409, 429, 5xx)."""
    return 400 <= status < 500 and status not in (408, 409, 429)


def _as_reply(script: Text | ToolUse | Reply) -> Reply:
    return script if isinstance(script, Reply) else Reply([script])


def _usage(body: Mapping[str, Any], output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": max(1, len(json.dumps(body.get("messages", []))) // 4),
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _stream_events(
    api: FakeMessagesAPI, body: Mapping[str, Any], reply: Reply
) -> Iterator[tuple[str, dict[str, Any]] | float]:
    """SSE ``(event, data)`` pairs of one message, with delays (floats) between deltas."""
    msg_id = api._new_id("msg")
    model = str(body.get("model") or "claude-fake")
    start_usage = _usage(body, 1)
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        },
    )
    if reply.pause > 0:
        yield float(reply.pause)
    out_tokens = 0
    for index, block in enumerate(reply.blocks):
        if isinstance(block, Thinking):
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
            for delta in (
                {"type": "thinking_delta", "thinking": block.thinking},
                {"type": "signature_delta", "signature": block.signature},
            ):
                out_tokens += 1
                yield (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
        elif isinstance(block, Text):
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for i, piece in enumerate(block.deltas()):
                if i and block.delay > 0:
                    yield block.delay
                out_tokens += 1
                delta = {"type": "text_delta", "text": piece}
                yield (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
        else:
            start = {
                "type": "tool_use",
                "id": block.id or api._new_id("toolu"),
                "name": block.name,
                "input": {},
            }
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            doc = json.dumps(dict(block.input))
            step = max(1, len(doc) // 3)
            for piece in [doc[i : i + step] for i in range(0, len(doc), step)]:
                out_tokens += 1
                delta = {"type": "input_json_delta", "partial_json": piece}
                yield (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.effective_stop_reason(), "stop_sequence": None},
            "usage": {"output_tokens": max(1, out_tokens)},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _message_json(api: FakeMessagesAPI, body: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in reply.blocks:
        if isinstance(block, Thinking):
            content.append(
                {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
            )
        elif isinstance(block, Text):
            content.append({"type": "text", "text": block.text})
        else:
            tid = block.id or api._new_id("toolu")
            content.append(
                {"type": "tool_use", "id": tid, "name": block.name, "input": dict(block.input)}
            )
    return {
        "id": api._new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model") or "claude-fake"),
        "content": content,
        "stop_reason": reply.effective_stop_reason(),
        "stop_sequence": None,
        "usage": _usage(body, max(1, len(content))),
    }


def _enqueue_json(api: FakeMessagesAPI, body: Any) -> int:
    """``POST /_fake/enqueue``: a list of scripts for the main conversation, or an object
    ``{"lane": "main" | "subagent" | "taskTurn", "prompt": <subagent prompt>, "scripts":
    [...]}``. Returns how many replies that conversation has pending."""
    if isinstance(body, list) or body is None:
        body = {"lane": "main", "scripts": body or []}
    if not isinstance(body, dict):
        raise ValueError("expected a list of scripts or {lane, scripts}")
    scripts = [script_from_json(item) for item in body.get("scripts") or []]
    lane = body.get("lane", "main")
    if lane == "main":
        api.enqueue(*scripts)
        return api.pending()
    if lane == "subagent":
        prompt = body["prompt"]
        if not isinstance(prompt, str):
            raise ValueError("a subagent lane needs its prompt (a string)")
        api.enqueue_subagent(prompt, *scripts)
        return api.pending_subagent(prompt)
    if lane == "taskTurn":
        api.enqueue_task_turn(*scripts)
        return api.pending_task_turns()
    raise ValueError(f"unknown lane {lane!r} (main, subagent, taskTurn)")


def make_handler(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "FakeMessagesAPI/1"
        # Headers and body are separate writes: with Nagle's algorithm the body of each
        # answer on a kept-alive connection waited ~40 ms for the client's delayed ACK.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        # -- plumbing --
        def _read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                data = bytearray()
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return bytes(data)
                    data += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _send_json(self, status: int, doc: Any, *, head: bool = False) -> None:
            data = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", api._new_id("req"))
            self.end_headers()
            if not head:
                self.wfile.write(data)

        def _error(self, status: int, type_: str, message: str) -> None:
            self._send_json(status, {"type": "error", "error": {"type": type_, "message": message}})

        def _record(self, body: Any, kind: RequestKind, raw_size: int) -> None:
            parts = urlsplit(self.path)
            api._record(
                RecordedRequest(
                    method=self.command,
                    path=parts.path,
                    query=parts.query,
                    headers={k: v for k, v in self.headers.items()},
                    body=body,
                    kind=kind,
                    raw_size=raw_size,
                )
            )

        # -- verbs --
        def do_HEAD(self) -> None:
            self._record(None, "other", 0)
            self._send_json(200, {}, head=True)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/_fake/requests":
                kind = parse_qs(parts.query).get("kind", ["messages"])[0]
                self._send_json(200, [r.body for r in api.requests if r.kind == kind])
                return
            self._record(None, "other", 0)
            self._send_json(200, {})

        def do_POST(self) -> None:
            raw = self._read_body()
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            path = urlsplit(self.path).path.rstrip("/")
            if path == "/_fake/enqueue":
                try:
                    pending = _enqueue_json(api, body)
                except (TypeError, ValueError, KeyError) as exc:
                    self._error(400, "invalid_request_error", f"bad script: {exc}")
                    return
                self._send_json(200, {"pending": pending})
                return
            if path == "/v1/messages/count_tokens":
                self._record(body, "count_tokens", len(raw))
                self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
                return
            if path != "/v1/messages":
                self._record(body, "other", len(raw))
                self._error(404, "not_found_error", f"fake API has no POST {self.path}")
                return
            if not isinstance(body, dict):
                self._record(body, "other", len(raw))
                self._error(400, "invalid_request_error", "request body is not a JSON object")
                return
            script: Script
            kind: RequestKind
            if api.is_side_request(body):
                script, kind = api.side_reply, "side"
            else:
                script, kind = api._answer(body, self.headers.get(SUBAGENT_ID_HEADER))
            self._record(body, kind, len(raw))
            if isinstance(script, ApiError):
                self._error(script.status, script.type, script.message)
                return
            reply = _as_reply(script)
            if not body.get("stream"):
                self._send_json(200, _message_json(api, body, reply))
                return
            self._stream(body, reply)

        def _stream(self, body: dict[str, Any], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")  # the body ends when the connection does
            self.send_header("request-id", api._new_id("req"))
            self.close_connection = True
            try:
                self.end_headers()  # an interrupt may have closed the connection already
                for item in _stream_events(api, body, reply):
                    if isinstance(item, float):
                        if not self._wait(item):
                            return
                        continue
                    event, data = item
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (e.g. an interrupt)

        def _wait(self, seconds: float) -> bool:
            """Wait between stream events; False as soon as the client hung up (an interrupt)
            or the server is stopping."""
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                step = min(left, 0.05)
                readable, _, _ = select.select([self.connection], [], [], step)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return False  # EOF: the client closed the connection
                if not api._sleep(step if readable else 0):  # bytes to read: do not spin
                    return False
            return True

        def _not_found(self) -> None:
            self._record(None, "other", 0)
            self.close_connection = True  # any request body is left unread
            self._error(404, "not_found_error", f"fake API has no {self.command} {self.path}")

        do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_found

    return Handler
