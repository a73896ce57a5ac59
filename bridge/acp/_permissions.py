"""ACP permissions: the CLI's permission prompts as ``session/request_permission``.

Each prompt offers allow once / always and reject once / always (``ExitPlanMode``
offers the mode to continue in); AskUserQuestion becomes an elicitation form
where the client has them, else one permission request per question.
``session/cancel`` resolves every open question as cancelled.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

import anyio

from bridge import duplex
from bridge.jsonrpc import Endpoint, JsonRpcError

from . import tools, wire
from ._updates import Live, Updates

__all__ = ["Permissions", "resolve_asking"]

log = logging.getLogger("bridge.acp")


class Permissions:
    """Asks the client about the CLI's permission requests.

    Each session's handler (:meth:`handler`) is made when its process is spawned, with
    the ACP session id it has (the CLI's conversation id): a warm spare, spawned before
    anyone asked for it, finds its session among the live ones once it is handed out,
    and denies until then.
    """

    def __init__(self, endpoint: Endpoint, updates: Updates, live: Mapping[str, Live]) -> None:
        self._endpoint = endpoint
        self._updates = updates
        self._live = live
        self.client_capabilities: dict[str, Any] = {}
        """What the client said it can do (from ``initialize``)."""

    def handler(self, session_id: str) -> duplex.PermissionHandler:
        """The permission handler of a session to be spawned as ``session_id``."""
        return functools.partial(self.decide, session_id)

    async def decide(self, session_id: str, request: duplex.PermissionRequest) -> duplex.Decision:
        """Ask the client about one CLI permission request (a client that fails to
        answer denies it, saying so to the model)."""
        live = self._live.get(session_id)
        if live is None:
            return duplex.Deny(message="the session has no client yet")
        try:
            return await self._decide(live, request)
        except JsonRpcError as exc:
            log.info("session %s: permission request failed: %s", live.id, exc)
            return duplex.Deny(
                message=f"{request.tool_name} was denied: the client could not be asked "
                f"({exc.message} (code {exc.code}))"
            )

    async def _decide(self, live: Live, request: duplex.PermissionRequest) -> duplex.Decision:
        if live.cancelled:
            return duplex.Deny(message="The user cancelled.", interrupt=True)
        if request.tool_name == "AskUserQuestion":
            return await self._ask_questions(live, request)
        key = _rule_key(request)
        if key in live.rejected:
            return duplex.Deny(message="The user rejected this for the session.")
        # The CLI asks about ExitPlanMode with an empty input; the plan is in the tool_use.
        shown = request.input or live.tool_inputs.get(request.tool_use_id or "", {})
        view = tools.describe(request.tool_name, shown, live.cwd)
        if request.tool_name == "ExitPlanMode":
            options = [
                wire.PermissionOption("acceptEdits", "Yes, and accept edits", "allow_always"),
                wire.PermissionOption("default", "Yes, and ask before edits", "allow_once"),
                wire.PermissionOption("reject_once", "No, keep planning", "reject_once"),
            ]
        else:
            options = [
                wire.PermissionOption("allow_once", "Allow", "allow_once"),
                wire.PermissionOption("allow_always", _always_label(request), "allow_always"),
                wire.PermissionOption("reject_once", "Reject", "reject_once"),
                wire.PermissionOption("reject_always", "Always reject", "reject_always"),
            ]
        tool_call = wire.ToolCallFields(
            request.tool_use_id or request.request_id,
            view.title,
            view.kind,
            "pending",
            view.content,
            view.locations,
            shown,
        )
        choice = await self._ask(
            live,
            request.request_id,
            "session/request_permission",
            wire.RequestPermissionParams(live.id, tool_call, options),
        )
        if choice is None:
            return duplex.Deny(message="The user cancelled.", interrupt=True)
        option = (choice.get("outcome") or {}) if isinstance(choice, dict) else {}
        if option.get("outcome") != "selected":
            return duplex.Deny(message="The user cancelled.", interrupt=True)
        picked = option.get("optionId")
        if request.tool_name == "ExitPlanMode":
            if picked in ("acceptEdits", "default"):
                update = {"type": "setMode", "mode": picked, "destination": "session"}
                self._updates.mode_changed(live, str(picked))
                return duplex.Allow(updated_permissions=[update])
            return duplex.Deny(message="The user wants to keep planning.")
        if picked == "allow_once":
            return duplex.Allow()
        if picked == "allow_always":
            return duplex.Allow(updated_permissions=_always_rules(request))
        if picked == "reject_always":
            live.rejected.add(key)
        return duplex.Deny(message="The user rejected this tool call.")

    async def _ask(self, live: Live, request_id: str, method: str, params: Any) -> Any:
        """Call the client; None when ``session/cancel`` resolved the question first.
        Raises :class:`~bridge.jsonrpc.JsonRpcError` when the client answered with an error
        (:class:`~bridge.jsonrpc.ConnectionClosed` when it is gone)."""
        with anyio.CancelScope() as scope:
            live.asking[request_id] = scope
            try:
                return await self._endpoint.request(method, params)
            finally:
                live.asking.pop(request_id, None)
        return None

    async def _ask_questions(
        self, live: Live, request: duplex.PermissionRequest
    ) -> duplex.Decision:
        """AskUserQuestion: an elicitation form where the client has them, else one
        permission request per question whose options are the answers."""
        questions = [q for q in request.input.get("questions") or [] if isinstance(q, dict)]
        answers: dict[str, str] = {}
        form = (self.client_capabilities.get("elicitation") or {}).get("form") is not None
        if form:
            properties = {
                f"q{i}": {
                    "type": "string",
                    "title": str(q.get("question", "")),
                    "description": str(q.get("header", "")),
                    "enum": [str(o.get("label")) for o in q.get("options") or []],
                }
                for i, q in enumerate(questions)
            }
            schema = {"type": "object", "properties": properties, "required": list(properties)}
            reply = await self._ask(
                live,
                request.request_id,
                "elicitation/create",
                wire.ElicitationParams(
                    live.id, "form", "Claude has a question", schema, request.tool_use_id
                ),
            )
            if not isinstance(reply, dict) or reply.get("action") != "accept":
                return duplex.Deny(message="The user did not answer.")
            given = reply.get("content") or {}
            for i, q in enumerate(questions):
                if isinstance(given, dict) and given.get(f"q{i}") is not None:
                    answers[str(q.get("question"))] = str(given[f"q{i}"])
        else:
            for q in questions:
                labels = [str(o.get("label")) for o in q.get("options") or []]
                options = [
                    wire.PermissionOption(f"answer:{n}", label, "allow_once")
                    for n, label in enumerate(labels)
                ]
                options.append(wire.PermissionOption("skip", "Skip", "reject_once"))
                tool_call = wire.ToolCallFields(
                    request.tool_use_id or request.request_id,
                    str(q.get("question", "Question")),
                    "other",
                    "pending",
                )
                reply = await self._ask(
                    live,
                    request.request_id,
                    "session/request_permission",
                    wire.RequestPermissionParams(live.id, tool_call, options),
                )
                outcome = (reply.get("outcome") or {}) if isinstance(reply, dict) else {}
                picked = str(outcome.get("optionId", ""))
                if outcome.get("outcome") != "selected":
                    return duplex.Deny(message="The user cancelled.", interrupt=True)
                if picked.startswith("answer:"):
                    answers[str(q.get("question"))] = labels[int(picked.split(":")[1])]
        if not answers:
            return duplex.Deny(message="The user did not answer.")
        return duplex.Allow(updated_input={**request.input, "answers": answers})


def resolve_asking(live: Live) -> None:
    """Resolve the session's open questions to the client as cancelled."""
    for scope in list(live.asking.values()):
        scope.cancel()


def _rule_key(request: duplex.PermissionRequest) -> str:
    """What 'always reject' remembers: the rule the CLI suggests, or the tool."""
    for suggestion in request.suggestions:
        for rule in suggestion.get("rules") or []:
            if isinstance(rule, dict) and rule.get("toolName"):
                return f"{rule['toolName']}({rule.get('ruleContent') or ''})"
    return request.tool_name


def _always_rules(request: duplex.PermissionRequest) -> list[dict[str, Any]]:
    """The CLI's own suggestions (what its "don't ask again" would apply), or a rule
    allowing the tool for this session when it made none."""
    if request.suggestions:
        return list(request.suggestions)
    return [
        {
            "type": "addRules",
            "rules": [{"toolName": request.tool_name}],
            "behavior": "allow",
            "destination": "session",
        }
    ]


def _always_label(request: duplex.PermissionRequest) -> str:
    """Says what "always" commits to: the rules, and a mode switch when suggested."""
    parts = []
    for suggestion in _always_rules(request):
        if suggestion.get("type") == "addRules" and suggestion.get("behavior") == "allow":
            for rule in suggestion.get("rules") or []:
                if isinstance(rule, dict):
                    content = rule.get("ruleContent")
                    name = rule.get("toolName")
                    parts.append(f"{name}({content})" if content else str(name))
        elif suggestion.get("type") == "setMode":
            parts.append(f"{suggestion.get('mode')} mode")
    return "Always allow " + (", ".join(parts) if parts else request.tool_name)
