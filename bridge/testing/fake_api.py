"""A fake Anthropic Messages API on 127.0.0.1 that the real ``claude`` CLI runs turns against.

The server is a stdlib ``ThreadingHTTPServer`` running in a daemon thread, so sync, asyncio
and trio tests can all use it. Point the CLI at it with ``ANTHROPIC_BASE_URL=api.url`` (see
:func:`bridge.testing.realcli.offline_env`)::

    with FakeMessagesAPI() as api:
        api.enqueue(Reply([Text("Running it. "), ToolUse("Bash", {"command": "echo hi"})]))
        api.enqueue(Text("done"))
        ...  # run `claude -p ...` with offline_env(api.url, home)
        assert api.tool_results()[0]["content"] == "hi"

Endpoints: ``POST /v1/messages`` (query string ignored; SSE when ``"stream": true``, one JSON
message otherwise), ``POST /v1/messages/count_tokens`` (``{"input_tokens": N}``), ``HEAD``/
``GET`` anything (200, ``{}``); anything else is a 404 JSON error.

Scripting. A reply is a :class:`Text`, a :class:`ToolUse`, a :class:`Reply` (several blocks) or
an :class:`ApiError`. ``api.enqueue(...)`` queues replies that successive main ``/v1/messages``
calls consume in order; once the queue is empty ``api.responder(body)`` decides. The default
responder (:meth:`FakeMessagesAPI.default_responder`) looks at the last user message:

- it carries a ``tool_result``  -> ``Text("Tool finished: <result text>")``
- text contains ``API_ERROR``   -> ``ApiError(400, "invalid_request_error", ...)``
- text contains ``SLOW``        -> ``"word0 word1 ... word299 "``, one word per delta, 50 ms
  apart (15 s in all, so a test can interrupt it)
- text contains ``USE_BASH``    -> ``Text("Running it. ")`` + ``ToolUse("Bash", {"command":
  api.bash_command})``; ``{cwd}`` in that template becomes the CLI's working directory (read
  from the "Primary working directory:" line the CLI sends), so the default command is
  ``touch <cwd>/made-by-bash && echo hello-from-bash``
- text contains ``ASKQ``        -> an ``AskUserQuestion`` tool_use ("Which colour?" Red/Blue)
- text contains ``USE_WRITE``   -> ``Text("Writing it. ")`` + ``ToolUse("Write", {"file_path":
  "<cwd>/written.txt", "content": "written by claude\\n"})``
- text contains ``USE_EDIT``    -> ``Text("Reading it. ")`` + ``ToolUse("Read", {"file_path":
  "<cwd>/notes.txt"})``; when that Read's result comes back, ``Text("Editing it. ")`` +
  ``ToolUse("Edit", {"file_path": ..., "old_string": "hello", "new_string": "goodbye"})`` (the
  CLI refuses an Edit of a file it has not read). :attr:`FakeMessagesAPI.edit_target` sets the
  file and the strings.
- anything else                 -> ``Text("Echo: <last user text>")``

"Last user text" is the last text block of the last user message that is not a
``<system-reminder>``.

Side requests. CLI 2.1.332 in ``-p`` stream-json mode sends one streaming ``POST
/v1/messages?beta=true`` per model call and nothing else, except: a non-streaming
``max_tokens: 1`` "Hi" request to validate the model after a ``set_model`` control request, and
(only when non-essential traffic is allowed) a ``HEAD /api/hello`` probe. Such requests, and
any request with no tools and no environment block (title or summary generation), never
consume scripted replies: they get :attr:`FakeMessagesAPI.side_reply` (a short text). See
:func:`is_side_request`. Older CLIs differ: 2.1.257 probes ``HEAD /api/hello`` and 2.1.176
``HEAD /`` even under ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` (every ``HEAD``/``GET`` is
answered 200), neither validates a model after ``set_model``, and 2.1.257 re-sends a request
that got a 400 (a ``resend``, see :class:`ApiError`). Everything is recorded in
``api.requests``; ``api.messages_requests()`` lists the main calls only (no resends),
``api.tool_results()`` every ``tool_result`` the CLI sent back, and
``api.wait_for_requests(n)`` blocks until ``n`` main calls arrived.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_BASH_COMMAND",
    "ApiError",
    "FakeMessagesAPI",
    "RecordedRequest",
    "Reply",
    "RequestKind",
    "Responder",
    "Script",
    "Text",
    "Thinking",
    "ToolUse",
    "is_side_request",
    "large_text",
    "last_user_message",
    "last_user_text",
    "request_cwd",
    "script_from_json",
]

DEFAULT_BASH_COMMAND = "touch {cwd}/made-by-bash && echo hello-from-bash"
_DEFAULT_CHUNK = 16 * 1024
_CWD_RE = re.compile(r"Primary working directory: ([^\n]+)")
_WORD_RE = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class Text:
    """A text block. Streamed as several ``text_delta`` events.

    ``chunk_size`` characters per delta; ``None`` means one word per delta when ``delay`` is
    set, else deltas of at most 16 KiB. ``delay`` seconds pass between deltas.
    """

    text: str
    chunk_size: int | None = None
    delay: float = 0.0

    def deltas(self) -> list[str]:
        if self.chunk_size is not None:
            n = max(1, self.chunk_size)
            return [self.text[i : i + n] for i in range(0, len(self.text), n)] or [""]
        if self.delay > 0:
            return _WORD_RE.findall(self.text) or [""]
        return Text(self.text, _DEFAULT_CHUNK).deltas()


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block; ``id`` defaults to a fresh ``toolu_fake_N``."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Thinking:
    """A thinking block in a :class:`Reply`: ``thinking_delta`` events, then a signature."""

    thinking: str
    signature: str = "fake-signature"


@dataclass(frozen=True)
class Reply:
    """One assistant message of several blocks; ``stop_reason`` defaults to ``tool_use`` when
    any block is a :class:`ToolUse`, else ``end_turn``."""

    blocks: Sequence[Text | ToolUse | Thinking]
    stop_reason: str | None = None

    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


@dataclass(frozen=True)
class ApiError:
    """An HTTP error answer: ``{"type": "error", "error": {"type": ..., "message": ...}}``.

    A request the CLI re-sends after a final error (a 4xx other than 408, 409 and 429) gets
    the same error again without consuming a reply, and is recorded as a ``resend``: CLI
    2.1.257 re-sends a 400 once with one beta fewer even under
    :func:`bridge.testing.realcli.offline_env`, and 2.1.332 up to 5 times without
    ``CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS``. A retry of 429/5xx/529 (up to
    ``CLAUDE_CODE_MAX_RETRIES``, default 10, with backoff, a ``system``/``api_retry`` frame
    each) consumes the next reply.
    """

    status: int = 400
    type: str = "invalid_request_error"
    message: str = "fake API error"


Script: TypeAlias = Text | ToolUse | Reply | ApiError
Responder: TypeAlias = Callable[[dict[str, Any]], Script]
RequestKind: TypeAlias = Literal["messages", "resend", "side", "count_tokens", "other"]


def large_text(n_bytes: int, chunk_size: int = 64 * 1024) -> Text:
    """A :class:`Text` of exactly ``n_bytes`` ASCII characters (numbered lines), streamed in
    ``chunk_size`` deltas."""
    line = itertools.count()
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        piece = f"line {next(line):08d} " + "x" * 50 + "\n"
        parts.append(piece)
        size += len(piece)
    return Text("".join(parts)[:n_bytes], chunk_size=chunk_size)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received. ``body`` is the parsed JSON (``None`` if absent or not
    JSON); ``kind`` tells main ``/v1/messages`` calls from side requests."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    kind: RequestKind
    raw_size: int = 0

    def header(self, name: str, default: str | None = None) -> str | None:
        """A header by case-insensitive name (``headers`` keeps the names as sent)."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), default)


def _text_of(content: Any) -> str:
    """Flatten a message or tool_result ``content`` (string or blocks) to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def last_user_message(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The last ``role: user`` message of a Messages request body."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return msg
    return None


def last_user_text(body: Mapping[str, Any]) -> str:
    """Last text block of the last user message that is not a ``<system-reminder>``."""
    msg = last_user_message(body)
    if msg is None:
        return ""
    texts = [
        str(b.get("text", ""))
        for b in _blocks(msg.get("content"))
        if b.get("type") == "text"
        and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
    ]
    return texts[-1].strip() if texts else ""


def _turn_prompt(body: Mapping[str, Any]) -> str:
    """The text of the last user message that carries text (the prompt of the current turn,
    looking past the tool results that followed it)."""
    for msg in reversed(body.get("messages") or []):
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        texts = [
            str(b.get("text", ""))
            for b in _blocks(msg.get("content"))
            if b.get("type") == "text"
            and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
        ]
        if texts:
            return texts[-1]
    return ""


def _last_tool_name(body: Mapping[str, Any]) -> str | None:
    """The name of the last ``tool_use`` block the assistant sent in this conversation."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            uses = [b for b in _blocks(msg.get("content")) if b.get("type") == "tool_use"]
            if uses:
                return str(uses[-1].get("name"))
    return None


def request_cwd(body: Mapping[str, Any]) -> str | None:
    """The CLI's working directory, from the "Primary working directory:" line it sends (in the
    system prompt or a system-role message)."""
    chunks = [_text_of(body.get("system"))]
    chunks += [
        _text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)
    ]
    for chunk in chunks:
        m = _CWD_RE.search(chunk)
        if m:
            return m.group(1).strip()
    return None


def is_side_request(body: Mapping[str, Any]) -> bool:
    """True for ``/v1/messages`` bodies that are not the main conversation.

    Those are probes with ``max_tokens`` <= 1 (the CLI validates a model that way after
    ``set_model``) and requests that offer no tools *and* lack the session's environment block
    ("Primary working directory: ..."), as title or summary generation would. A main request
    under ``--tools ""`` still carries the environment block, so it stays a main request.
    """
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= 1:
        return True
    return not body.get("tools") and request_cwd(body) is None


class FakeMessagesAPI:
    """The fake server. Use as a context manager or call :meth:`start`/:meth:`stop`."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        bash_command: str = DEFAULT_BASH_COMMAND,
        side_reply: Text | None = None,
    ) -> None:
        self.responder: Responder = responder or self.default_responder
        self.bash_command = bash_command
        #: ``USE_EDIT``'s file (relative to the CLI's cwd), old string and new string.
        self.edit_target: tuple[str, str, str] = ("notes.txt", "hello", "goodbye")
        self.side_reply = side_reply or Text("OK")
        #: Decides which ``/v1/messages`` bodies are side requests; replace to change the rule.
        self.is_side_request: Callable[[Mapping[str, Any]], bool] = is_side_request
        self._queue: deque[Script] = deque()
        self._final_error: tuple[str, ApiError] | None = None  # (request body, its error)
        self._requests: list[RecordedRequest] = []
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> FakeMessagesAPI:
        if self._server is not None:
            return self
        self._closing.clear()
        server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.name = f"FakeMessagesAPI:{self.port}"
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._closing.set()  # wakes streams sleeping between deltas
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting -----------------------------------------------------------------------
    def enqueue(self, *replies: Script) -> None:
        """Queue replies for the next main ``/v1/messages`` calls, in order."""
        with self._cond:
            self._queue.extend(replies)

    def pending(self) -> int:
        """How many queued replies are not consumed yet."""
        with self._cond:
            return len(self._queue)

    def _main_reply(self, body: dict[str, Any]) -> tuple[Script, bool]:
        """The reply to a main request, and whether the request re-sends the previous one,
        which got a final error (then it gets that error again, consuming nothing)."""
        key = json.dumps(body, sort_keys=True)
        with self._cond:
            last = self._final_error
            if last is not None and last[0] == key:
                return last[1], True
        script = self._next_reply(body)
        final = isinstance(script, ApiError) and _is_final(script.status)
        with self._cond:
            self._final_error = (key, script) if isinstance(script, ApiError) and final else None
        return script, False

    def _next_reply(self, body: dict[str, Any]) -> Script:
        with self._cond:
            if self._queue:
                return self._queue.popleft()
        try:
            return self.responder(body)
        except Exception as exc:  # a broken responder ends the turn instead of hanging it
            traceback.print_exc()
            return ApiError(400, "invalid_request_error", f"fake API responder raised {exc!r}")

    def default_responder(self, body: dict[str, Any]) -> Script:
        """The keyword conventions described in the module docstring."""
        msg = last_user_message(body)
        results = [b for b in _blocks(msg and msg.get("content")) if b.get("type") == "tool_result"]
        if results:
            if "USE_EDIT" in _turn_prompt(body) and _last_tool_name(body) == "Read":
                name, old, new = self.edit_target
                path = f"{request_cwd(body) or '.'}/{name}"
                edit = {"file_path": path, "old_string": old, "new_string": new}
                return Reply([Text("Editing it. "), ToolUse("Edit", edit)])
            return Text("Tool finished: " + "\n".join(_text_of(r.get("content")) for r in results))
        text = last_user_text(body)
        if "USE_WRITE" in text:
            path = f"{request_cwd(body) or '.'}/written.txt"
            write = {"file_path": path, "content": "written by claude\n"}
            return Reply([Text("Writing it. "), ToolUse("Write", write)])
        if "USE_EDIT" in text:
            path = f"{request_cwd(body) or '.'}/{self.edit_target[0]}"
            return Reply([Text("Reading it. "), ToolUse("Read", {"file_path": path})])
        if "API_ERROR" in text:
            return ApiError(400, "invalid_request_error", "fake API says the request is invalid")
        if "SLOW" in text:
            return Text("".join(f"word{i} " for i in range(300)), delay=0.05)
        if "USE_BASH" in text:
            cwd = request_cwd(body) or "."
            command = self.bash_command.replace("{cwd}", shlex.quote(cwd))
            return Reply(
                [
                    Text("Running it. "),
                    ToolUse("Bash", {"command": command, "description": "say hello"}),
                ]
            )
        if "ASKQ" in text:
            question = {
                "question": "Which colour?",
                "header": "Colour",
                "multiSelect": False,
                "options": [
                    {"label": "Red", "description": "warm"},
                    {"label": "Blue", "description": "cool"},
                ],
            }
            return ToolUse("AskUserQuestion", {"questions": [question]})
        return Text("Echo: " + text)

    # -- recording -----------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._cond:
            return list(self._requests)

    def messages_requests(self) -> list[RecordedRequest]:
        """The main-conversation ``/v1/messages`` calls (no side requests, no count_tokens)."""
        return [r for r in self.requests if r.kind == "messages"]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every ``tool_result`` block the CLI sent, first occurrence per ``tool_use_id``, as
        ``{"tool_use_id", "content" (text), "is_error" (bool)}``."""
        seen: dict[str, dict[str, Any]] = {}
        for req in self.messages_requests():
            for msg in req.body.get("messages") or []:
                if not isinstance(msg, dict) or msg.get("role") != "user":
                    continue
                for b in _blocks(msg.get("content")):
                    tid = str(b.get("tool_use_id", ""))
                    if b.get("type") == "tool_result" and tid not in seen:
                        seen[tid] = {
                            "tool_use_id": tid,
                            "content": _text_of(b.get("content")),
                            "is_error": bool(b.get("is_error", False)),
                        }
        return list(seen.values())

    def wait_for_requests(
        self, n: int = 1, kind: RequestKind = "messages", timeout: float = 30.0
    ) -> list[RecordedRequest]:
        """Block until ``n`` requests of ``kind`` were received; raises ``TimeoutError``."""

        def matching() -> list[RecordedRequest]:
            return [r for r in self._requests if r.kind == kind]

        with self._cond:
            if not self._cond.wait_for(lambda: len(matching()) >= n, timeout=timeout):
                raise TimeoutError(f"{len(matching())} {kind} requests after {timeout}s, want {n}")
            return matching()

    def _record(self, req: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(req)
            self._cond.notify_all()

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_fake_{next(self._ids):06d}"

    def _sleep(self, seconds: float) -> bool:
        """Sleep between deltas; False if the server is stopping."""
        return not self._closing.wait(seconds)


# -- wire format -------------------------------------------------------------------------


def _is_final(status: int) -> bool:
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


def _make_handler(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "FakeMessagesAPI/1"

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
            if urlsplit(self.path).path == "/_fake/requests":
                self._send_json(200, [r.body for r in api.messages_requests()])
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
                    api.enqueue(*[script_from_json(item) for item in body or []])
                except (TypeError, ValueError, KeyError) as exc:
                    self._error(400, "invalid_request_error", f"bad script: {exc}")
                    return
                self._send_json(200, {"pending": api.pending()})
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
            side = api.is_side_request(body)
            script, resent = (api.side_reply, False) if side else api._main_reply(body)
            kind: RequestKind = "side" if side else "resend" if resent else "messages"
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
            self.end_headers()
            self.close_connection = True
            try:
                for item in _stream_events(api, body, reply):
                    if isinstance(item, float):
                        if not api._sleep(item):
                            return
                        continue
                    event, data = item
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (e.g. an interrupt)

        def _not_found(self) -> None:
            self._record(None, "other", 0)
            self.close_connection = True  # any request body is left unread
            self._error(404, "not_found_error", f"fake API has no {self.command} {self.path}")

        do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_found

    return Handler


def script_from_json(item: Mapping[str, Any]) -> Script:
    """A script from its JSON form, for hosts that drive the fake API over HTTP
    (``POST /_fake/enqueue`` takes a list of these)::

        {"text": "hello", "delay": 0.05}
        {"toolUse": {"name": "Bash", "input": {"command": "ls"}}}
        {"blocks": [{"text": "Running it. "}, {"toolUse": {...}}], "stopReason": "tool_use"}
        {"error": {"status": 400, "type": "invalid_request_error", "message": "no"}}
    """
    if "error" in item:
        err = item["error"]
        return ApiError(
            int(err.get("status", 400)),
            str(err.get("type", "api_error")),
            str(err.get("message", "fake API error")),
        )
    if "blocks" in item:
        blocks: list[Text | ToolUse] = []
        for block in item["blocks"]:
            one = script_from_json(block)
            if not isinstance(one, Text | ToolUse):
                raise ValueError("blocks hold only text and toolUse items")
            blocks.append(one)
        return Reply(blocks, item.get("stopReason"))
    if "toolUse" in item:
        use = item["toolUse"]
        return ToolUse(str(use["name"]), dict(use.get("input") or {}), use.get("id"))
    if "text" in item:
        return Text(str(item["text"]), item.get("chunkSize"), float(item.get("delay", 0.0)))
    raise ValueError(f"unknown script {item!r}")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bridge.testing.fake_api``: serve on 127.0.0.1 until stdin closes.

    Prints the base URL as the first line of stdout, so a test in any language can start it,
    read the URL and point the CLI at it (``ANTHROPIC_BASE_URL``). ``POST /_fake/enqueue``
    queues scripts (see :func:`script_from_json`); ``GET /_fake/requests`` lists the main
    ``/v1/messages`` bodies received so far.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m bridge.testing.fake_api")
    parser.parse_args(argv)
    with FakeMessagesAPI() as api:
        print(api.url, flush=True)
        try:
            sys.stdin.read()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
