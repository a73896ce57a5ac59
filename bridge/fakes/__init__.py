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

The scripted fake *CLI* of the fast tests stays with the test helpers (``testing/fake_cli``).
"""

from __future__ import annotations

from .bodies import (
    RecordedRequest,
    RequestKind,
    is_side_request,
    last_user_message,
    last_user_text,
    request_cwd,
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
    large_text,
    script_from_json,
)

__all__ = [
    "COLOUR_QUESTION",
    "DEFAULT_BASH_COMMAND",
    "FAKE_API_KEY",
    "OFFLINE_FLAGS",
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
    "offline_env",
    "request_cwd",
    "script_from_json",
]
