"""Test doubles the bridge ships, for its demo and for host authors' own tests.

- :class:`FakeMessagesAPI` (:mod:`bridge.fakes.messages_api`): a fake Anthropic Messages API
  on 127.0.0.1 that the real ``claude`` CLI runs turns against, scripted with
  :mod:`bridge.fakes.scripts` and recorded as :mod:`bridge.fakes.bodies`.
- :func:`offline_env` (:mod:`bridge.fakes.offline`): the environment that points the real CLI
  at it and nowhere else.

::

    with FakeMessagesAPI() as api:
        api.enqueue(Text("hello"))
        env = offline_env(api.url, home=tmp_path / "home")

Background work (a ``Bash`` with ``run_in_background``, an ``Agent`` subagent, the turn the CLI
starts by itself when such work ends) is scripted per conversation: :meth:`FakeMessagesAPI.
enqueue` for the host's turns, :meth:`~FakeMessagesAPI.enqueue_subagent` for a subagent's own
model calls, :meth:`~FakeMessagesAPI.enqueue_task_turn` for the CLI-started turns; see
:mod:`bridge.fakes.messages_api`.

The scripted fake *CLI* of the fast tests stays with the test helpers (``testing/fake_cli``).
"""

from __future__ import annotations

from .bodies import (
    SUBAGENT_ID_HEADER,
    RecordedRequest,
    RequestKind,
    TaskNotice,
    is_side_request,
    is_task_turn,
    last_user_message,
    last_user_text,
    request_cwd,
    subagent_prompt,
    task_notifications,
)
from .messages_api import DEFAULT_BASH_COMMAND, FakeMessagesAPI
from .offline import FAKE_API_KEY, OFFLINE_FLAGS, offline_env
from .scripts import (
    COLOUR_QUESTION,
    ApiError,
    Reply,
    Responder,
    Script,
    Text,
    Thinking,
    ToolUse,
    agent_tool,
    bash_tool,
    large_text,
    script_from_json,
    slow_text,
)

__all__ = [
    "COLOUR_QUESTION",
    "DEFAULT_BASH_COMMAND",
    "FAKE_API_KEY",
    "OFFLINE_FLAGS",
    "SUBAGENT_ID_HEADER",
    "ApiError",
    "FakeMessagesAPI",
    "RecordedRequest",
    "Reply",
    "RequestKind",
    "Responder",
    "Script",
    "TaskNotice",
    "Text",
    "Thinking",
    "ToolUse",
    "agent_tool",
    "bash_tool",
    "is_side_request",
    "is_task_turn",
    "large_text",
    "last_user_message",
    "last_user_text",
    "offline_env",
    "request_cwd",
    "script_from_json",
    "slow_text",
    "subagent_prompt",
    "task_notifications",
]
