"""A fake Anthropic Messages API on 127.0.0.1 that the real ``claude`` CLI runs turns against.

The server is a stdlib ``ThreadingHTTPServer`` running in a daemon thread, so sync, asyncio
and trio tests can all use it. Point the CLI at it with ``ANTHROPIC_BASE_URL=api.url`` (see
:func:`bridge.fakes.offline_env`)::

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
- text holds ``MCP <server> <tool> <json-args>`` -> ``Text("Calling the MCP tool.")`` +
  ``ToolUse("mcp__<server>__<tool>", <json-args>)`` (the fake CLI's keyword alike: an
  in-process MCP tool or a host tool; bad JSON reads as ``{}``)
- anything else                 -> ``Text("Echo: <last user text>")``

"Last user text" is the last text block of the last user message that is not a
``<system-reminder>``.

Background work. Three conversations reach the server, each scripted on its own, so a
subagent's calls or the CLI's own turns never eat the host's replies (they come whenever the
background work gets there, racing the main conversation):

- the main conversation's host turns: :meth:`~FakeMessagesAPI.enqueue`, then ``responder``;
- each subagent's calls (the request carries :data:`~bridge.fakes.SUBAGENT_ID_HEADER`), told
  apart by the subagent's prompt (its first user text, the ``prompt`` of the ``Agent`` call
  that started it): :meth:`~FakeMessagesAPI.enqueue_subagent`, then ``subagent_responder``
  (by default the keyword conventions above, applied to the subagent's own messages);
- the turns the CLI starts by itself to answer a task notification
  (:func:`~bridge.fakes.is_task_turn`): :meth:`~FakeMessagesAPI.enqueue_task_turn`, then
  ``task_turn_responder`` (by default :meth:`~FakeMessagesAPI.default_task_turn_responder`:
  ``Text("Task <status>: <summary>")`` per notification, ``"Tool finished: ..."`` after a tool).

::

    api.enqueue(Reply([Text("Starting a helper. "), agent_tool("HELPER: write ap.txt")]))
    api.enqueue(Text("The helper runs in the background."))
    api.enqueue_subagent("HELPER: write ap.txt", bash_tool("echo hi > ap.txt"), Text("wrote it"))
    api.enqueue_task_turn(Text("The helper finished."))

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
``api.wait_for_requests(n)`` blocks until ``n`` main calls arrived (``kind="subagent"`` for a
subagent's). ``api.subagent_requests()`` and ``api.task_turn_requests()`` list the other two
conversations' calls.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import threading
import traceback
from collections import deque
from collections.abc import Callable, Mapping
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

from ._wire import is_final, make_handler
from .bodies import (
    RecordedRequest,
    RequestKind,
    _blocks,
    _last_tool_name,
    _text_of,
    _turn_prompt,
    is_side_request,
    is_task_turn,
    last_user_message,
    last_user_text,
    request_cwd,
    subagent_prompt,
    task_notifications,
)
from .scripts import COLOUR_QUESTION, ApiError, Reply, Responder, Script, Text, ToolUse

_MCP_CALL = re.compile(r"\bMCP\s+(\S+)\s+(\S+)\s*(\{.*\})?", re.S)

__all__ = ["DEFAULT_BASH_COMMAND", "FakeMessagesAPI"]

DEFAULT_BASH_COMMAND = "touch {cwd}/made-by-bash && echo hello-from-bash"


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
        #: Answers a subagent's call once its queue (:meth:`enqueue_subagent`) is empty.
        self.subagent_responder: Responder = self.default_responder
        #: Answers a call of a CLI-started turn once :meth:`enqueue_task_turn`'s queue is empty.
        self.task_turn_responder: Responder = self.default_task_turn_responder
        self.bash_command = bash_command
        #: ``USE_EDIT``'s file (relative to the CLI's cwd), old string and new string.
        self.edit_target: tuple[str, str, str] = ("notes.txt", "hello", "goodbye")
        self.side_reply = side_reply or Text("OK")
        #: Decides which ``/v1/messages`` bodies are side requests; replace to change the rule.
        self.is_side_request: Callable[[Mapping[str, Any]], bool] = is_side_request
        self._queue: deque[Script] = deque()
        self._subagent_queues: dict[str, deque[Script]] = {}
        self._task_turn_queue: deque[Script] = deque()
        #: Per conversation, its last call's body and final error (a re-send gets it again).
        self._final_errors: dict[str, tuple[str, ApiError]] = {}
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
        server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self))
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

    def enqueue_subagent(self, prompt: str, *replies: Script) -> None:
        """Queue replies for the calls of the subagent started with ``prompt`` (the ``prompt``
        of its ``Agent`` tool call, matched after stripping surrounding whitespace), in order.
        Each subagent conversation has its own queue; a subagent whose prompt has none left
        is answered by :attr:`subagent_responder`. Two subagents started with the same
        prompt share one queue."""
        with self._cond:
            self._subagent_queues.setdefault(prompt.strip(), deque()).extend(replies)

    def pending_subagent(self, prompt: str) -> int:
        """How many replies queued for the subagent of ``prompt`` are not consumed yet."""
        with self._cond:
            return len(self._subagent_queues.get(prompt.strip(), ()))

    def enqueue_task_turn(self, *replies: Script) -> None:
        """Queue replies for the calls of the turns the CLI starts by itself after a task
        notification (:func:`~bridge.fakes.is_task_turn`), in order, across such turns."""
        with self._cond:
            self._task_turn_queue.extend(replies)

    def pending_task_turns(self) -> int:
        """How many replies queued for CLI-started turns are not consumed yet."""
        with self._cond:
            return len(self._task_turn_queue)

    def _answer(self, body: dict[str, Any], agent_id: str | None) -> tuple[Script, RequestKind]:
        """The reply to a model call of one of the three conversations, and the call's kind.

        A call that re-sends its conversation's previous one, which got a final error, gets
        that error again and consumes nothing (kind ``resend``)."""
        kind: RequestKind = "messages"
        if agent_id is not None:
            kind, lane = "subagent", "subagent:" + subagent_prompt(body)
            with self._cond:
                queue = self._subagent_queues.setdefault(subagent_prompt(body), deque())
            responder = self.subagent_responder
        elif is_task_turn(body):
            lane, queue, responder = "task turn", self._task_turn_queue, self.task_turn_responder
        else:
            lane, queue, responder = "main", self._queue, self.responder
        key = json.dumps(body, sort_keys=True)
        with self._cond:
            last = self._final_errors.get(lane)
            if last is not None and last[0] == key:
                return last[1], "resend"
        script = self._next_reply(queue, responder, body)
        with self._cond:
            if isinstance(script, ApiError) and is_final(script.status):
                self._final_errors[lane] = (key, script)
            else:
                self._final_errors.pop(lane, None)
        return script, kind

    def _next_reply(
        self, queue: deque[Script], responder: Responder, body: dict[str, Any]
    ) -> Script:
        with self._cond:
            if queue:
                return queue.popleft()
        try:
            return responder(body)
        except Exception as exc:  # a broken responder ends the turn instead of hanging it
            traceback.print_exc()
            return ApiError(400, "invalid_request_error", f"fake API responder raised {exc!r}")

    def default_task_turn_responder(self, body: dict[str, Any]) -> Script:
        """A CLI-started turn: ``"Tool finished: ..."`` after one of its own tool calls, else
        ``"Task <status>: <summary>"`` for each task notification, one line each."""
        msg = last_user_message(body)
        results = [b for b in _blocks(msg and msg.get("content")) if b.get("type") == "tool_result"]
        if results:
            return Text("Tool finished: " + "\n".join(_text_of(r.get("content")) for r in results))
        notices = task_notifications(body)
        return Text("\n".join(f"Task {n.status}: {n.summary}" for n in notices) or "Noted.")

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
            return ToolUse("AskUserQuestion", {"questions": [dict(COLOUR_QUESTION)]})
        mcp = _MCP_CALL.search(text)
        if mcp is not None:
            try:
                args = json.loads(mcp.group(3) or "{}")
            except ValueError:
                args = {}
            name = f"mcp__{mcp.group(1)}__{mcp.group(2)}"
            tool_input = args if isinstance(args, dict) else {}
            return Reply([Text("Calling the MCP tool."), ToolUse(name, tool_input)])
        return Text("Echo: " + text)

    # -- recording -----------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._cond:
            return list(self._requests)

    def messages_requests(self) -> list[RecordedRequest]:
        """The main-conversation ``/v1/messages`` calls (no side requests, no count_tokens, no
        subagent calls; a CLI-started turn's calls are the main conversation's)."""
        return [r for r in self.requests if r.kind == "messages"]

    def subagent_requests(self, prompt: str | None = None) -> list[RecordedRequest]:
        """The subagents' ``/v1/messages`` calls; only those of the subagent started with
        ``prompt`` when it is given. :attr:`RecordedRequest.agent_id` tells the subagents
        apart too."""
        wanted = None if prompt is None else prompt.strip()
        subagents = [r for r in self.requests if r.kind == "subagent"]
        if wanted is None:
            return subagents
        return [r for r in subagents if subagent_prompt(r.body) == wanted]

    def task_turn_requests(self) -> list[RecordedRequest]:
        """The main-conversation calls of the turns the CLI started by itself."""
        return [r for r in self.messages_requests() if is_task_turn(r.body)]

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
