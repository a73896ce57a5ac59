"""Generate ``schema/``, the bridge's published contract, from :mod:`bridge.rpc.wire`.

``claude-bridge schema`` writes three files, each a pure function of ``wire.py``:

``bridge.schema.json``
    JSON Schema 2020-12. ``$defs`` holds every params, result, event and error
    type, plus one envelope per method (``<Method>Request``, ``<Method>Response``,
    ``<Method>Notification``), ``ErrorResponse``, and the unions ``ClientMessage``
    (what a client may send) and ``ServerMessage`` (what the bridge sends). The
    root validates any message of either direction.
``methods.json``
    The method table: direction, kind, params and result types, errors, summary.
``PROTOCOL.md``
    The reference for host authors, with an example exchange per method and per
    event. Every example is validated against the schema while generating, so
    the document cannot drift from the contract.

The output is deterministic (same ``wire.py``, same bytes): keys are sorted,
nothing depends on time or the machine. ``claude-bridge schema --check``
compares the files on disk with what would be generated; CI runs it.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, NamedTuple

import msgspec

from bridge.duplex.features import MIN_CLI_VERSION, TESTED_CLI_VERSIONS

from . import wire
from .wire.common import _Wire

__all__ = [
    "GENERIC_ERRORS",
    "SCHEMA_FILE",
    "build_methods",
    "build_schema",
    "envelope_name",
    "generate",
    "main",
    "wire_types",
]

SCHEMA_FILE = "bridge.schema.json"
METHODS_FILE = "methods.json"
PROTOCOL_FILE = "PROTOCOL.md"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
_REF = "#/$defs/{name}"

GENERIC_ERRORS: tuple[int, ...] = (
    wire.ErrorCode.PARSE_ERROR,
    wire.ErrorCode.INVALID_REQUEST,
    wire.ErrorCode.METHOD_NOT_FOUND,
    wire.ErrorCode.INTERNAL_ERROR,
    wire.ErrorCode.REQUEST_CANCELLED,
    wire.ErrorCode.MESSAGE_TOO_LARGE,
    wire.ErrorCode.SERVER_NOT_INITIALIZED,
)
"""Codes any request may get, besides those its method lists (and InvalidParams
for every method that takes params)."""

JsonObj = dict[str, Any]


def _ref(name: str) -> JsonObj:
    return {"$ref": _REF.format(name=name)}


# --------------------------------------------------------------------------- docstrings


def _clean(text: str) -> str:
    """A docstring as one Markdown paragraph per blank-line-separated block."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs).replace("``", "`")


def _field_docs() -> dict[str, dict[str, str]]:
    """``{class name: {python field name: docstring}}`` read from the wire modules' source.

    msgspec does not see field docstrings (plain string literals after a field),
    so they are taken from the syntax tree.
    """
    modules = sorted({cls.__module__ for cls in wire_types()})
    body = [
        node for name in modules for node in ast.parse(inspect.getsource(sys.modules[name])).body
    ]
    out: dict[str, dict[str, str]] = {}
    for node in body:
        if not isinstance(node, ast.ClassDef):
            continue
        docs: dict[str, str] = {}
        for first, second in zip(node.body, node.body[1:], strict=False):
            if (
                isinstance(first, ast.AnnAssign)
                and isinstance(first.target, ast.Name)
                and isinstance(second, ast.Expr)
                and isinstance(second.value, ast.Constant)
                and isinstance(second.value.value, str)
            ):
                docs[first.target.id] = _clean(second.value.value)
        out[node.name] = docs
    return out


# --------------------------------------------------------------------------- the types


def wire_types() -> list[type[msgspec.Struct]]:
    """Every public wire struct, by name (params, results, events, errors, nested types)."""
    found = []
    for name, value in vars(wire).items():
        if (
            isinstance(value, type)
            and issubclass(value, _Wire)
            and value.__module__.startswith(f"{wire.__name__}.")
            and not name.startswith("_")
        ):
            found.append(value)
    return sorted(found, key=lambda t: t.__name__)


def event_types() -> list[type[msgspec.Struct]]:
    """The members of :data:`wire.Event`, in declaration order."""
    members: tuple[type[msgspec.Struct], ...] = wire.Event.__args__
    return list(members)


def event_tag(cls: type[msgspec.Struct]) -> str:
    """The ``type`` value of an event struct."""
    tag = cls.__struct_config__.tag
    assert isinstance(tag, str)
    return tag


def envelope_name(method: str, suffix: str) -> str:
    """``session/send`` + ``Request`` -> ``SessionSendRequest``."""
    parts = [p for p in re.split(r"[/$]", method) if p]
    return "".join(p[0].upper() + p[1:] for p in parts) + suffix


def _walk(node: Any, visit: Callable[[JsonObj], None]) -> None:
    if isinstance(node, dict):
        visit(node)
        for value in node.values():
            _walk(value, visit)
    elif isinstance(node, list):
        for value in node:
            _walk(value, visit)


def _open_objects(node: JsonObj) -> None:
    """``dict[str, Any]`` becomes an explicit open object (``additionalProperties: true``)."""
    if (
        node.get("type") == "object"
        and "properties" not in node
        and "additionalProperties" not in node
    ):
        node["additionalProperties"] = True


def _described_refs(node: JsonObj) -> None:
    """``{"$ref": X, "description": d}`` becomes ``{"allOf": [{"$ref": X}], "description": d}``.

    Both mean the same in 2020-12, but code generators (json-schema-to-typescript)
    would turn a ``$ref`` with a sibling into a copy of the type (``ExitStatus1``).
    """
    for prop in node.get("properties", {}).values():
        if isinstance(prop, dict) and "$ref" in prop and len(prop) > 1:
            prop["allOf"] = [{"$ref": prop.pop("$ref")}]


def _type_defs() -> JsonObj:
    """``$defs`` of the wire structs, with field docstrings as descriptions."""
    _, defs = msgspec.json.schema_components(wire_types(), ref_template=_REF)
    docs = _field_docs()
    for name, schema in defs.items():
        cls = getattr(wire, name)
        class_doc = inspect.getdoc(cls)
        if class_doc:
            schema["description"] = _clean(class_doc)
        props = schema.get("properties", {})
        for info in msgspec.structs.fields(cls):
            doc = next(
                (
                    docs[k.__name__][info.name]
                    for k in cls.__mro__
                    if info.name in docs.get(k.__name__, {})
                ),
                None,
            )
            if doc is not None and info.encode_name in props:
                props[info.encode_name]["description"] = doc
    for cls in event_types():
        defs[cls.__name__]["properties"]["type"]["description"] = "Says which event this is."
    # The event union gets a name of its own.
    event_params = defs["EventParams"]["properties"]["event"]
    union = {key: value for key, value in event_params.items() if key in ("anyOf", "discriminator")}
    defs["Event"] = {
        "title": "Event",
        "description": "One session event; `type` says which. The set is closed for this "
        "protocol version, but clients must ignore event types they do not know (a later "
        "1.x bridge may add some).",
        **union,
    }
    defs["EventParams"]["properties"]["event"] = {
        **_ref("Event"),
        "description": "The event; `type` says which.",
    }
    _walk(defs, _open_objects)
    _walk(defs, _described_refs)
    for name in _bridge_only(defs):  # the bridge sends every member, defaults included
        if defs[name].get("properties"):
            defs[name]["required"] = list(defs[name]["properties"])
    return defs


def _bridge_only(defs: JsonObj) -> set[str]:
    """The types only the bridge sends (results, notifications, its requests' params,
    error data): what it sends always has every member, so every member is required."""
    bridge: list[str] = ["ErrorData"]
    client: list[str] = []
    for method in wire.METHODS:
        params = method.params.__name__ if method.params is not None else None
        result = method.result.__name__ if method.result is not None else None
        sends, answers = (
            (client, bridge) if method.direction != "serverToClient" else (bridge, client)
        )
        if method.direction == "both":
            sends = answers = client  # either side: keep optional what may be left out
        sends.extend([params] if params else [])
        answers.extend([result] if result else [])
    return _reachable(defs, bridge) - _reachable(defs, client)


def _reachable(defs: JsonObj, roots: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = [r for r in roots if r in defs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)

        def visit(node: JsonObj) -> None:
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                todo.append(ref.removeprefix("#/$defs/"))

        _walk(defs[name], visit)
    return {n for n in seen if n in defs}


def _error_defs() -> JsonObj:
    codes = [
        {"const": code, "title": name, "description": doc}
        for code, (name, doc) in wire.ERRORS.items()
    ]
    return {
        "ErrorCode": {
            "title": "ErrorCode",
            "description": _clean(inspect.getdoc(wire.ErrorCode) or ""),
            "oneOf": codes,
        },
        "ResponseError": {
            "title": "ResponseError",
            "description": "The `error` member of an error response from the bridge.",
            "type": "object",
            "properties": {
                "code": _ref("ErrorCode"),
                "message": {
                    "type": "string",
                    "description": "What went wrong, written for a person.",
                },
                "data": _ref("ErrorData"),
            },
            "required": ["code", "message", "data"],
        },
        "ErrorResponse": {
            "title": "ErrorResponse",
            "description": "The bridge's answer to a request that failed. `id` is null when "
            "the request's id could not be read (a parse error).",
            "type": "object",
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": {"anyOf": [_ref("RequestId"), {"type": "null"}]},
                "error": _ref("ResponseError"),
            },
            "required": ["jsonrpc", "id", "error"],
        },
        "ClientErrorResponse": {
            "title": "ClientErrorResponse",
            "description": "A client's error answer to a bridge request. For "
            "`session/requestPermission` it denies the tool use.",
            "type": "object",
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": _ref("RequestId"),
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "integer"},
                        "message": {"type": "string"},
                        "data": {},
                    },
                    "required": ["code", "message"],
                },
            },
            "required": ["jsonrpc", "id", "error"],
        },
    }


def sends(method: wire.Method, side: str) -> bool:
    return method.direction in (side, "both")


def _params_schema(method: wire.Method) -> tuple[JsonObj, bool]:
    """The ``params`` member of a request or notification, and whether it is required."""
    if method.params is None:
        return {"type": "null", "description": "No params: omit the member."}, False
    ref = _ref(method.params.__name__)
    if method.params_optional:
        return {
            "anyOf": [ref, {"type": "null"}],
            "description": "May be omitted (or null).",
        }, False
    return ref, True


def _envelope_defs() -> JsonObj:
    defs: JsonObj = {
        "RequestId": {
            "title": "RequestId",
            "description": "A request id: an integer or a string. The bridge numbers its own "
            "requests 1, 2, 3, ...",
            "anyOf": [{"type": "integer"}, {"type": "string"}],
        }
    }
    for method in wire.METHODS:
        params, required = _params_schema(method)
        if method.kind == "request":
            props = {
                "jsonrpc": {"const": "2.0"},
                "id": _ref("RequestId"),
                "method": {"const": method.name},
                "params": params,
            }
            defs[envelope_name(method.name, "Request")] = {
                "title": envelope_name(method.name, "Request"),
                "description": method.summary,
                "type": "object",
                "properties": props,
                "required": ["jsonrpc", "id", "method", *(["params"] if required else [])],
            }
            result = (
                _ref(method.result.__name__)
                if method.result is not None
                else {"type": "null", "description": "Always null."}
            )
            defs[envelope_name(method.name, "Response")] = {
                "title": envelope_name(method.name, "Response"),
                "description": f"The successful answer to `{method.name}`.",
                "type": "object",
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "id": _ref("RequestId"),
                    "result": result,
                },
                "required": ["jsonrpc", "id", "result"],
            }
        else:
            defs[envelope_name(method.name, "Notification")] = {
                "title": envelope_name(method.name, "Notification"),
                "description": method.summary,
                "type": "object",
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "method": {"const": method.name},
                    "params": params,
                },
                "required": ["jsonrpc", "method", *(["params"] if required else [])],
                "not": {"required": ["id"]},
            }
    client: list[JsonObj] = []
    server: list[JsonObj] = []
    for method in wire.METHODS:
        kind = "Request" if method.kind == "request" else "Notification"
        if sends(method, "clientToServer"):
            client.append(_ref(envelope_name(method.name, kind)))
        if sends(method, "serverToClient"):
            server.append(_ref(envelope_name(method.name, kind)))
    for method in wire.METHODS:
        if method.kind != "request":
            continue
        if sends(method, "serverToClient"):
            client.append(_ref(envelope_name(method.name, "Response")))
        if sends(method, "clientToServer"):
            server.append(_ref(envelope_name(method.name, "Response")))
    client.append(_ref("ClientErrorResponse"))
    server.append(_ref("ErrorResponse"))
    defs["ClientMessage"] = {
        "title": "ClientMessage",
        "description": "Any message a client sends to the bridge: a request, a notification, "
        "or the answer to a bridge request.",
        "anyOf": client,
    }
    defs["ServerMessage"] = {
        "title": "ServerMessage",
        "description": "Any message the bridge sends: the answer to a client request (a "
        "result or an error), a notification, or a request.",
        "anyOf": server,
    }
    return defs


def build_schema() -> JsonObj:
    """The JSON Schema of the protocol (a fresh dict on every call)."""
    defs: JsonObj = {}
    for part in (_type_defs(), _error_defs(), _envelope_defs()):
        clash = set(defs) & set(part)
        if clash:  # pragma: no cover - a naming mistake in wire.py
            raise ValueError(f"schema definitions defined twice: {sorted(clash)}")
        defs.update(part)
    return {
        "$schema": DIALECT,
        "$comment": "Generated by `claude-bridge schema` from bridge/rpc/wire.py. Do not edit.",
        "title": "BridgeMessage",
        "description": f"claude-duplex-bridge protocol {wire.PROTOCOL_VERSION}: any JSON-RPC "
        "message of either direction. Validate with `$defs/ClientMessage` or "
        "`$defs/ServerMessage` to check one direction.",
        "anyOf": [_ref("ClientMessage"), _ref("ServerMessage")],
        "$defs": defs,
    }


# --------------------------------------------------------------------------- methods.json


def method_errors(method: wire.Method) -> tuple[int, ...]:
    """The codes ``method`` documents (InvalidParams first for a method with params)."""
    codes = list(method.errors)
    if method.params is not None and wire.ErrorCode.INVALID_PARAMS not in codes:
        codes.insert(0, wire.ErrorCode.INVALID_PARAMS)
    return tuple(codes) if method.kind == "request" else ()


def build_methods() -> JsonObj:
    """The machine-readable method table."""
    methods = []
    for m in wire.METHODS:
        kind_suffix = "Request" if m.kind == "request" else "Notification"
        entry: JsonObj = {
            "name": m.name,
            "direction": m.direction,
            "kind": m.kind,
            "summary": m.summary,
            "envelope": _ref(envelope_name(m.name, kind_suffix)),
            "params": _ref(m.params.__name__) if m.params is not None else None,
            "paramsOptional": m.params is None or m.params_optional,
        }
        if m.kind == "request":
            entry["result"] = _ref(m.result.__name__) if m.result is not None else None
            entry["response"] = _ref(envelope_name(m.name, "Response"))
            entry["errors"] = [
                {"code": code, "name": wire.ERRORS[code][0]} for code in method_errors(m)
            ]
        methods.append(entry)
    return {
        "protocolVersion": wire.PROTOCOL_VERSION,
        "schema": SCHEMA_FILE,
        "genericErrors": [{"code": code, "name": wire.ERRORS[code][0]} for code in GENERIC_ERRORS],
        "methods": methods,
    }


# --------------------------------------------------------------------------- examples


class Step(NamedTuple):
    """One message of an example exchange."""

    sender: Literal["client", "bridge"]
    message: JsonObj
    invalid: bool = False
    """A message the bridge rejects on purpose (the schema must reject it too)."""


class Example(NamedTuple):
    """An example exchange, shown in PROTOCOL.md and validated while generating."""

    steps: tuple[Step, ...]
    note: str = ""


def _c(message: JsonObj, *, invalid: bool = False) -> Step:
    return Step("client", message, invalid)


def _b(message: JsonObj) -> Step:
    return Step("bridge", message)


def _request(msg_id: int, method: str, params: JsonObj | None = None) -> JsonObj:
    out: JsonObj = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def _notification(method: str, params: JsonObj | None = None) -> JsonObj:
    out: JsonObj = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def _result(msg_id: int, result: Any) -> JsonObj:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _error(msg_id: int | None, code: int, message: str, **data: Any) -> JsonObj:
    error = {"code": code, "message": message, "data": {"kind": wire.ERRORS[code][0], **data}}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


# Values from a real run (claude 2.1.332 against the fake Messages API, NDJSON framing).
_SID = "s1-2674ed3e"
_CWD = "/home/user/project"
_CLI = "/usr/local/bin/claude"
_CLAUDE_SID = "6a207e71-0b7c-4a47-9d1e-3f5c2b8a9e10"
_PERMISSION_ID = "d0d70292-5b1e-4c8a-a3f4-7e2c9b61d5a8"
_OLD_CLAUDE_SID = "0f3c9a52-7d1e-4b6a-8c2f-9e5d1a7b3c48"
_COMMAND = "c6efb3fc-8e2a-4d1b-9f57-2a4b6c8d0e13"
_LIVE_COMMAND = "22222222-2222-4222-8222-222222222222"
_BASH_INPUT = {"command": "npm test", "description": "Run the test suite"}
_USAGE = {
    "input_tokens": 10,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 10,
    "service_tier": "standard",
}
_COMMANDS = [
    {
        "name": "debug",
        "description": "Enable debug logging for this session and help diagnose issues",
        "argumentHint": "[issue description]",
        "builtin": True,
    },
    {
        "name": "simplify",
        "description": "Review the changed code for reuse, simplification, efficiency, and "
        "altitude cleanups, then apply the fixes.",
        "argumentHint": "[<target>]",
        "builtin": True,
    },
]
_MODELS = [
    {
        "value": "default",
        "resolvedModel": "claude-opus-5-5",
        "displayName": "Default (recommended)",
        "description": "Use the default model (currently Opus 5.5) · $4/$20 per Mtok",
        "supportsEffort": True,
    }
]
_ACCOUNT = {"tokenSource": "none", "apiKeySource": "ANTHROPIC_API_KEY", "apiProvider": "firstParty"}
_CLI_INFO = {"path": _CLI, "version": "2.1.332", "supported": True}
"""``cli`` before any turn: the version is known, the capabilities are not yet."""
_STATUS = {
    "sessionId": _SID,
    "state": "idle",
    "pid": 20991,
    "turnInFlight": False,
    "cwd": _CWD,
    "totalCostUsd": 0.03018,
    "turnsCompleted": 2,
    "exitStatus": {"state": "running"},
    "claudeSessionId": _CLAUDE_SID,
    "model": "claude-opus-5-5",
    "permissionMode": "default",
    "cli": {
        "path": _CLI,
        "version": "2.1.332",
        "supported": True,
        "capabilities": [
            "interrupt_receipt_v1",
            "interrupt_cancel_queued_v1",
            "interrupt_send_now_v1",
            "msg_lifecycle_v1",
            "ask_user_question_unanswered_v1",
        ],
        "legacy": False,
    },
}


def _event(seq: int, event: JsonObj, session_id: str = _SID, *, replay: bool = False) -> JsonObj:
    params = {"sessionId": session_id, "seq": seq, "event": event, "replay": replay}
    return _notification("session/event", params)


def _turn(text: str, **extra: Any) -> JsonObj:
    result: JsonObj = {
        "text": text,
        "isError": False,
        "subtype": "success",
        "stopReason": "end_turn",
        "terminalReason": "completed",
        "interrupted": False,
        "costUsd": 0.020372,
        "totalCostUsd": 0.03018,
        "durationMs": 567.4,
        "numTurns": 2,
        "claudeSessionId": _CLAUDE_SID,
        "usage": _USAGE,
        "commandUuids": [_COMMAND],
    }
    result.update(extra)
    return result


_PERMISSION_PARAMS = {
    "sessionId": _SID,
    "requestId": _PERMISSION_ID,
    "toolName": "Bash",
    "input": _BASH_INPUT,
    "displayName": "Bash",
    "toolUseId": "toolu_1",
    "description": "Run the test suite",
    "suggestions": [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": _BASH_INPUT["command"]}],
            "behavior": "allow",
            "destination": "localSettings",
        },
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
    ],
    "blockedPath": "/home/user/other/notes.txt",
}

_ASK_INPUT = {
    "questions": [
        {
            "question": "Which colour?",
            "header": "Colour",
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
            ],
            "multiSelect": False,
        }
    ]
}

EVENT_EXAMPLES: dict[str, JsonObj] = {
    "init": {
        "type": "init",
        "claudeSessionId": _CLAUDE_SID,
        "model": "claude-opus-5-5",
        "cwd": _CWD,
        "permissionMode": "default",
        "tools": ["Task", "AskUserQuestion", "Bash", "Edit", "Read", "WebFetch", "Write"],
        "claudeCodeVersion": "2.1.332",
    },
    "status": {"type": "status", "status": "requesting"},
    "system": {
        "type": "system",
        "subtype": "compact_boundary",
        "data": {
            "type": "system",
            "subtype": "compact_boundary",
            "session_id": _CLAUDE_SID,
            "uuid": "0b3e6f1d-4c2a-4e8b-9a71-5d2c8f0e6a34",
            "compact_metadata": {"trigger": "manual", "pre_tokens": 48213},
        },
    },
    "textDelta": {"type": "textDelta", "text": "Hello! How can I help", "index": 0},
    "thinkingDelta": {
        "type": "thinkingDelta",
        "thinking": "The user wants a file created; Bash can do it.",
        "index": 0,
    },
    "toolInputDelta": {
        "type": "toolInputDelta",
        "partialJson": '{"command": "npm t',
        "index": 1,
    },
    "assistantText": {
        "type": "assistantText",
        "text": "All 42 tests pass.",
        "messageId": "msg_1795942594092",
    },
    "thinking": {
        "type": "thinking",
        "thinking": "The user wants a file created; Bash can do it.",
        "messageId": "msg_1795942594004",
    },
    "toolUse": {
        "type": "toolUse",
        "toolUseId": "toolu_1",
        "name": "Bash",
        "input": _BASH_INPUT,
        "messageId": "msg_1795942594004",
    },
    "toolResult": {
        "type": "toolResult",
        "toolUseId": "toolu_1",
        "content": "42 passing",
        "permissionDecision": {"decision": "accept", "source": "user_temporary"},
    },
    "userText": {"type": "userText", "text": "[Request interrupted by user]"},
    "result": {
        "type": "result",
        "subtype": "success",
        "isError": False,
        "text": "All 42 tests pass.",
        "stopReason": "end_turn",
        "terminalReason": "completed",
        "totalCostUsd": 0.03018,
        "numTurns": 2,
        "durationMs": 561.0,
        "usage": _USAGE,
    },
    "commandLifecycle": {
        "type": "commandLifecycle",
        "commandUuid": _LIVE_COMMAND,
        "state": "queued",
    },
    "permissionAutoDenied": {
        "type": "permissionAutoDenied",
        "requestId": _PERMISSION_ID,
        "toolName": "Bash",
        "message": "Bash was denied: the client does not answer permission requests "
        "(initializationOptions.permissions is not true)",
    },
    "lagged": {"type": "lagged", "missed": 1841},
    "invalidLine": {
        "type": "invalidLine",
        "line": "Warning: no stdin data received in 3s",
        "error": "JSON is malformed: invalid character (byte 0)",
    },
    "unknown": {
        "type": "unknown",
        "frameType": "rate_limit_event",
        "frame": {
            "type": "rate_limit_event",
            "rate_limit_info": {"status": "allowed", "resetsAt": 1795950000},
            "session_id": _CLAUDE_SID,
        },
    },
    "raw": {
        "type": "raw",
        "frame": {
            "type": "system",
            "subtype": "status",
            "status": "requesting",
            "session_id": _CLAUDE_SID,
            "uuid": "402a7f71-f4df-4986-853f-8673943d12ba",
        },
    },
}
"""One example of every event type, by ``type``."""

METHOD_EXAMPLES: dict[str, tuple[Example, ...]] = {
    "initialize": (
        Example(
            (
                _c(
                    _request(
                        1,
                        "initialize",
                        {
                            "processId": 4242,
                            "clientInfo": {"name": "claude-vscode", "version": "0.1.0"},
                            "capabilities": {},
                            "initializationOptions": {
                                "permissions": True,
                                "permissionTimeout": 300,
                            },
                        },
                    )
                ),
                _b(
                    _result(
                        1,
                        {
                            "serverInfo": {"name": "claude-duplex-bridge", "version": "0.1.0"},
                            "protocolVersion": wire.PROTOCOL_VERSION,
                            "capabilities": {"framings": ["content-length", "ndjson"]},
                            "cliPath": _CLI,
                            "cliVersion": "2.1.332",
                            "cli": _CLI_INFO,
                        },
                    )
                ),
            ),
            "The bridge sends every member, defaults included (`capabilities.permissions`, "
            "`rawEvents` and `progress` are `true`).",
        ),
        Example(
            (
                _c(_request(1, "initialize")),
                _b(
                    _result(
                        1,
                        {
                            "serverInfo": {"name": "claude-duplex-bridge", "version": "0.1.0"},
                            "protocolVersion": wire.PROTOCOL_VERSION,
                            "capabilities": {"framings": ["content-length", "ndjson"]},
                        },
                    )
                ),
            ),
            "Without params (as Neovim sends it) and on a machine with no `claude` found: "
            "`cliPath` and `cliVersion` are `null`; `session/create` may still name a CLI "
            "with `claudePath`.",
        ),
    ),
    "initialized": (Example((_c(_notification("initialized", {})),)),),
    "shutdown": (
        Example(
            (
                _c(_request(9, "shutdown")),
                _b(
                    _notification(
                        "session/exited",
                        {
                            "sessionId": _SID,
                            "status": {"state": "completed", "code": 0},
                            "reason": "shutdown",
                        },
                    )
                ),
                _b(_result(9, None)),
            ),
            "Every open session is closed and reaped first; each gets `session/exited` with "
            "reason `shutdown`.",
        ),
    ),
    "exit": (
        Example(
            (_c(_notification("exit")),),
            "The bridge exits with code 0 (1 if `shutdown` was not called first).",
        ),
    ),
    "session/create": (
        Example(
            (
                _c(_request(2, "session/create", {"cwd": _CWD, "permissionMode": "default"})),
                _b(
                    _result(
                        2,
                        {
                            "sessionId": _SID,
                            "pid": 20991,
                            "cwd": _CWD,
                            "cliPath": _CLI,
                            "permissionMode": "default",
                            "commands": _COMMANDS,
                            "models": _MODELS,
                            "account": _ACCOUNT,
                            "initialize": {
                                "commands": _COMMANDS,
                                "models": _MODELS,
                                "account": _ACCOUNT,
                                "pid": 20991,
                                "claude_code_version": "2.1.332",
                                "current_permission_mode": "default",
                                "output_style": "default",
                            },
                            "cli": _CLI_INFO,
                        },
                    )
                ),
            ),
            "Lists shortened; `initialize` holds the CLI's whole answer, in its own snake_case.",
        ),
        Example(
            (
                _c(_request(2, "session/create", {"cwd": _CWD})),
                _b(
                    _error(
                        2,
                        wire.ErrorCode.CLI_NOT_FOUND,
                        "claude CLI not found. Tried: --claude-path (not given), "
                        "$CLAUDE_BRIDGE_CLAUDE (not set), `claude` on PATH (not found), the "
                        "claude-agent-sdk wheel's bundled binary (claude-agent-sdk not "
                        "installed). Install it with `pip install 'claude-duplex-bridge[cli]'` "
                        "(bundles the CLI), put `claude` on PATH, set CLAUDE_BRIDGE_CLAUDE, or "
                        "pass --claude-path.",
                        tried=[
                            "--claude-path",
                            "$CLAUDE_BRIDGE_CLAUDE",
                            "`claude` on PATH (not found)",
                            "the claude-agent-sdk wheel's bundled binary "
                            "(claude-agent-sdk not installed)",
                        ],
                    )
                ),
            ),
        ),
        Example(
            (
                _c(
                    _request(
                        2,
                        "session/create",
                        {"cwd": _CWD, "resume": _OLD_CLAUDE_SID, "replay": True},
                    )
                ),
                _b(_event(1, {"type": "userText", "text": "please USE_BASH"}, replay=True)),
                _b(
                    _event(
                        2,
                        {
                            "type": "assistantText",
                            "text": "Running it. ",
                            "messageId": "msg_1795856104004",
                        },
                        replay=True,
                    )
                ),
                _b(
                    _event(
                        3,
                        {**EVENT_EXAMPLES["toolUse"], "messageId": "msg_1795856104004"},
                        replay=True,
                    )
                ),
                _b(
                    _event(
                        4,
                        {
                            "type": "toolResult",
                            "toolUseId": "toolu_1",
                            "content": "hello-from-bash",
                        },
                        replay=True,
                    )
                ),
                _b(
                    _event(
                        5,
                        {
                            "type": "assistantText",
                            "text": "Tool finished: hello-from-bash",
                            "messageId": "msg_1795856109092",
                        },
                        replay=True,
                    )
                ),
                _b(
                    _result(
                        2,
                        {
                            "sessionId": "s2-9c41d07a",
                            "pid": 21544,
                            "cwd": _CWD,
                            "cliPath": _CLI,
                            "permissionMode": "default",
                        },
                    )
                ),
            ),
            "Reopening an earlier conversation: its past messages arrive first, marked "
            "`replay: true`, numbered by the session's usual `seq`; then the answer. The "
            "next `session/send` continues the conversation with all of it in context.",
        ),
    ),
    "session/send": (
        Example(
            (
                _c(_request(3, "session/send", {"sessionId": _SID, "prompt": "run the tests"})),
                _b(_event(1, {**EVENT_EXAMPLES["commandLifecycle"], "commandUuid": _COMMAND})),
                _b(
                    _event(
                        2,
                        {"type": "commandLifecycle", "commandUuid": _COMMAND, "state": "started"},
                    )
                ),
                _b(_event(3, EVENT_EXAMPLES["init"])),
                _b(_event(4, {"type": "status", "status": "requesting"})),
                _b(_event(5, {"type": "textDelta", "text": "Running it. ", "index": 0})),
                _b(
                    _event(
                        6,
                        {
                            "type": "assistantText",
                            "text": "Running it. ",
                            "messageId": "msg_1795942594004",
                        },
                    )
                ),
                _b(_event(7, EVENT_EXAMPLES["toolUse"])),
                _b(_request(1, "session/requestPermission", _PERMISSION_PARAMS)),
                _c(_result(1, {"behavior": "allow"})),
                _b(_event(8, EVENT_EXAMPLES["toolResult"])),
                _b(
                    _event(
                        9,
                        {"type": "textDelta", "text": "All 42 tests pass.", "index": 0},
                    )
                ),
                _b(_event(10, EVENT_EXAMPLES["assistantText"])),
                _b(_event(11, EVENT_EXAMPLES["result"])),
                _b(
                    _event(
                        12,
                        {"type": "commandLifecycle", "commandUuid": _COMMAND, "state": "completed"},
                    )
                ),
                _b(_result(3, _turn("All 42 tests pass."))),
            ),
            "The prompt is command 1 of the turn (`queued`, `started`, ..., `completed`). The "
            "permission request interleaves with the events; the result comes after the "
            "turn's last event.",
        ),
        Example(
            (
                _c(_request(4, "session/send", {"sessionId": _SID, "prompt": 42}), invalid=True),
                _b(
                    _error(
                        4,
                        wire.ErrorCode.INVALID_PARAMS,
                        "invalid params for session/send: Expected `str | array`, got `int` "
                        "- at `$.prompt`",
                        path="$.prompt",
                    )
                ),
            ),
        ),
    ),
    "session/message": (
        Example(
            (
                _c(_request(5, "session/send", {"sessionId": _SID, "prompt": "count to sixty"})),
                _b(
                    _event(
                        12,
                        {"type": "commandLifecycle", "commandUuid": _COMMAND, "state": "started"},
                    )
                ),
                _c(
                    _request(
                        6,
                        "session/message",
                        {"sessionId": _SID, "prompt": "and a follow-up while running"},
                    )
                ),
                _b(_event(13, EVENT_EXAMPLES["commandLifecycle"])),
                _b(_result(6, {"uuid": _LIVE_COMMAND})),
                _b(
                    _event(
                        30,
                        {
                            "type": "commandLifecycle",
                            "commandUuid": _LIVE_COMMAND,
                            "state": "started",
                        },
                    )
                ),
                _b(
                    _result(
                        5,
                        _turn(
                            "Done, and the flaky test from your follow-up is fixed too.",
                            costUsd=0.00024,
                            totalCostUsd=0.0549,
                            durationMs=15148.2,
                            numTurns=1,
                            commandUuids=[_COMMAND, _LIVE_COMMAND],
                            results=2,
                        ),
                    )
                ),
            ),
            "Events 14-29 (the first reply streaming, its result) are left out. The turn ends "
            "when every input of it has its result: `results` is 2.",
        ),
    ),
    "session/interrupt": (
        Example(
            (
                _c(_request(7, "session/send", {"sessionId": _SID, "prompt": "count to sixty"})),
                _c(_request(8, "session/interrupt", {"sessionId": _SID, "cancelQueued": True})),
                _b(
                    _event(
                        40,
                        {
                            "type": "commandLifecycle",
                            "commandUuid": _LIVE_COMMAND,
                            "state": "cancelled",
                        },
                    )
                ),
                _b(_result(8, {"stillQueued": [], "cancelled": [_LIVE_COMMAND]})),
                _b(
                    _event(
                        41,
                        {
                            "type": "assistantText",
                            "text": "word0 word1 word2 word3 ",
                            "messageId": "msg_1795944280297730727",
                            "aborted": True,
                        },
                    )
                ),
                _b(_event(42, EVENT_EXAMPLES["userText"])),
                _b(
                    _result(
                        7,
                        {
                            "text": "word0 word1 word2 word3 ",
                            "isError": True,
                            "subtype": "error_during_execution",
                            "stopReason": None,
                            "terminalReason": "aborted_streaming",
                            "interrupted": True,
                            "costUsd": 0.00042,
                            "totalCostUsd": 0.0549,
                            "durationMs": 2023.0,
                            "numTurns": 2,
                            "claudeSessionId": _CLAUDE_SID,
                            "commandUuids": [_COMMAND],
                        },
                    )
                ),
            ),
            "A live message was queued in the turn (see `session/message`); `cancelQueued` "
            "cancelled it. The process stays: the next `session/send` continues the "
            "conversation.",
        ),
        Example(
            (
                _c(_request(9, "session/interrupt", {"sessionId": _SID, "cancelQueued": True})),
                _b(
                    _error(
                        9,
                        wire.ErrorCode.UNSUPPORTED,
                        "this CLI cannot cancel queued messages (no interrupt_cancel_queued_v1; "
                        "claude 2.1.176): interrupt without cancel_queued, the queued messages "
                        "then run",
                        capability="interrupt_cancel_queued_v1",
                    )
                ),
                _c(_request(10, "session/interrupt", {"sessionId": _SID})),
                _b(_result(10, {"stillQueued": None, "cancelled": None})),
            ),
            "The same on claude 2.1.176, which lacks `interrupt_cancel_queued_v1` and "
            "`interrupt_receipt_v1`: `cancelQueued` is refused and nothing is interrupted; "
            "a plain interrupt works, but the CLI does not say what it still had queued "
            "(null: unknown). See [CLI versions and fallbacks](#cli-versions).",
        ),
    ),
    "session/respondPermission": (
        Example(
            (
                _b(_request(2, "session/requestPermission", _PERMISSION_PARAMS)),
                _c(_result(2, {"behavior": "defer"})),
                _c(
                    _request(
                        12,
                        "session/respondPermission",
                        {
                            "sessionId": _SID,
                            "requestId": _PERMISSION_ID,
                            "decision": {
                                "behavior": "deny",
                                "message": "bash is denied by policy",
                            },
                        },
                    )
                ),
                _b(_result(12, {})),
                _b(
                    _event(
                        6,
                        {
                            "type": "toolResult",
                            "toolUseId": "toolu_1",
                            "content": "bash is denied by policy",
                            "isError": True,
                            "permissionDecision": {"decision": "reject", "source": "user_reject"},
                        },
                    )
                ),
            ),
            "Meanwhile `session/status` lists the request id in `pendingPermissions`.",
        ),
        Example(
            (
                _c(
                    _request(
                        13,
                        "session/respondPermission",
                        {
                            "sessionId": _SID,
                            "requestId": "zzz",
                            "decision": {"behavior": "allow"},
                        },
                    )
                ),
                _b(
                    _error(
                        13,
                        wire.ErrorCode.UNKNOWN_REQUEST,
                        "no pending permission request with id 'zzz'",
                    )
                ),
            ),
        ),
    ),
    "session/setModel": (
        Example(
            (
                _c(
                    _request(
                        14, "session/setModel", {"sessionId": _SID, "model": "claude-haiku-4-5"}
                    )
                ),
                _b(_result(14, {"model": "claude-haiku-4-5"})),
            ),
        ),
    ),
    "session/setPermissionMode": (
        Example(
            (
                _c(
                    _request(
                        15,
                        "session/setPermissionMode",
                        {"sessionId": _SID, "mode": "acceptEdits"},
                    )
                ),
                _b(_event(11, {"type": "status", "permissionMode": "acceptEdits"})),
                _b(_result(15, {"mode": "acceptEdits"})),
            ),
        ),
    ),
    "session/getContextUsage": (
        Example(
            (
                _c(_request(16, "session/getContextUsage", {"sessionId": _SID})),
                _b(
                    _result(
                        16,
                        {
                            "usage": {
                                "categories": [
                                    {
                                        "id": "system_prompt",
                                        "name": "System prompt",
                                        "tokens": 100,
                                        "kind": "used",
                                    },
                                    {
                                        "id": "messages",
                                        "name": "Messages",
                                        "tokens": 147,
                                        "kind": "used",
                                    },
                                    {
                                        "id": "free_space",
                                        "name": "Free space",
                                        "tokens": 964686,
                                        "kind": "free",
                                    },
                                ],
                                "totalTokens": 2314,
                                "maxTokens": 1000000,
                                "rawMaxTokens": 1000000,
                                "autocompactSource": "model-default",
                                "percentage": 0,
                            }
                        },
                    )
                ),
            ),
            "The CLI's report, passed through as it is (shortened here).",
        ),
    ),
    "session/status": (
        Example(
            (
                _c(_request(17, "session/status", {"sessionId": _SID})),
                _b(_result(17, _STATUS)),
            ),
        ),
        Example(
            (
                _c(_request(18, "session/status", {"sessionId": "zzz"})),
                _b(
                    _error(
                        18,
                        wire.ErrorCode.SESSION_NOT_FOUND,
                        "no session with id 'zzz' (session/list shows the sessions)",
                        sessionId="zzz",
                    )
                ),
            ),
        ),
        Example(
            (
                _b(
                    _notification(
                        "session/exited",
                        {
                            "sessionId": _SID,
                            "status": {"state": "failed", "signal": 9},
                            "reason": "failed",
                        },
                    )
                ),
                _c(_request(18, "session/status", {"sessionId": _SID})),
                _b(
                    _result(
                        18,
                        {
                            **_STATUS,
                            "state": "exited",
                            "exitStatus": {"state": "failed", "signal": 9},
                        },
                    )
                ),
                _c(_request(19, "session/create", {"cwd": _CWD, "resume": _CLAUDE_SID})),
                _b(
                    _result(
                        19,
                        {
                            "sessionId": "s2-9c41d07a",
                            "pid": 21544,
                            "cwd": _CWD,
                            "cliPath": _CLI,
                            "permissionMode": "default",
                        },
                    )
                ),
            ),
            "Recovery after a crash: the dead session still names its `claudeSessionId`; a "
            "new session resumes it with every completed turn in context.",
        ),
    ),
    "session/list": (
        Example(
            (
                _c(_request(19, "session/list")),
                _b(_result(19, {"sessions": [_STATUS]})),
            ),
            "No params needed: the member may be left out.",
        ),
    ),
    "session/history": (
        Example(
            (
                _c(_request(30, "session/history", {"cwd": _CWD, "limit": 20})),
                _b(
                    _result(
                        30,
                        {
                            "conversations": [
                                {
                                    "claudeSessionId": _CLAUDE_SID,
                                    "title": "Fix the flaky upload test",
                                    "customTitle": "Fix the flaky upload test",
                                    "summary": None,
                                    "firstPrompt": "why does test_upload fail on CI only?",
                                    "createdAt": 1795942590112,
                                    "lastModified": 1795943012870,
                                    "messageCount": 42,
                                    "gitBranch": "main",
                                    "cwd": _CWD,
                                    "fileSize": 88211,
                                    "liveSessionId": _SID,
                                },
                                {
                                    "claudeSessionId": _OLD_CLAUDE_SID,
                                    "title": "please USE_BASH",
                                    "customTitle": None,
                                    "summary": None,
                                    "firstPrompt": "please USE_BASH",
                                    "createdAt": 1795856101377,
                                    "lastModified": 1795856109512,
                                    "messageCount": 5,
                                    "gitBranch": "main",
                                    "cwd": _CWD,
                                    "fileSize": 30120,
                                    "liveSessionId": None,
                                },
                            ],
                            "total": 2,
                        },
                    )
                ),
            ),
            "Newest first. The first conversation is open in session `s1-2674ed3e` now.",
        ),
    ),
    "session/transcript": (
        Example(
            (
                _c(
                    _request(
                        31,
                        "session/transcript",
                        {"cwd": _CWD, "claudeSessionId": _OLD_CLAUDE_SID},
                    )
                ),
                _b(
                    _result(
                        31,
                        {
                            "claudeSessionId": _OLD_CLAUDE_SID,
                            "events": [
                                {"type": "userText", "text": "please USE_BASH"},
                                {
                                    "type": "assistantText",
                                    "text": "Running it. ",
                                    "messageId": "msg_1795856104004",
                                },
                                {
                                    **EVENT_EXAMPLES["toolUse"],
                                    "messageId": "msg_1795856104004",
                                },
                                {
                                    "type": "toolResult",
                                    "toolUseId": "toolu_1",
                                    "content": "hello-from-bash",
                                },
                                {
                                    "type": "assistantText",
                                    "text": "Tool finished: hello-from-bash",
                                    "messageId": "msg_1795856109092",
                                },
                            ],
                        },
                    )
                ),
            ),
        ),
        Example(
            (
                _c(
                    _request(
                        32,
                        "session/transcript",
                        {"cwd": _CWD, "claudeSessionId": "not-a-conversation"},
                    )
                ),
                _b(
                    _error(
                        32,
                        wire.ErrorCode.HISTORY_NOT_FOUND,
                        "no conversation 'not-a-conversation' in the history of " + _CWD,
                        claudeSessionId="not-a-conversation",
                    )
                ),
            ),
        ),
    ),
    "session/renameHistory": (
        Example(
            (
                _c(
                    _request(
                        33,
                        "session/renameHistory",
                        {
                            "cwd": _CWD,
                            "claudeSessionId": _OLD_CLAUDE_SID,
                            "title": "Bash smoke test",
                        },
                    )
                ),
                _b(_result(33, {})),
            ),
            "The next `session/history` shows it with `title` and `customTitle` "
            '"Bash smoke test". The bridge appends the same `custom-title` entry the CLI\'s '
            "own `/rename` writes, so the CLI shows the title too.",
        ),
    ),
    "session/deleteHistory": (
        Example(
            (
                _c(
                    _request(
                        34,
                        "session/deleteHistory",
                        {"cwd": _CWD, "claudeSessionId": _OLD_CLAUDE_SID},
                    )
                ),
                _b(_result(34, {})),
            ),
        ),
        Example(
            (
                _c(
                    _request(
                        35,
                        "session/deleteHistory",
                        {"cwd": _CWD, "claudeSessionId": _CLAUDE_SID},
                    )
                ),
                _b(
                    _error(
                        35,
                        wire.ErrorCode.CONVERSATION_IN_USE,
                        f"conversation {_CLAUDE_SID} is held by live session {_SID}: "
                        "close that session first",
                        sessionId=_SID,
                        claudeSessionId=_CLAUDE_SID,
                    )
                ),
            ),
            "A live session holds it: close the session, then delete.",
        ),
    ),
    "session/close": (
        Example(
            (
                _c(_request(20, "session/close", {"sessionId": _SID})),
                _b(
                    _notification(
                        "session/exited",
                        {
                            "sessionId": _SID,
                            "status": {"state": "completed", "code": 0},
                            "reason": "closed",
                        },
                    )
                ),
                _b(
                    _result(
                        20,
                        {
                            "exitStatus": {"state": "completed", "code": 0},
                            "reaped": True,
                            "stderrTail": "",
                        },
                    )
                ),
            ),
        ),
    ),
    "$/cancelRequest": (
        Example(
            (
                _c(_request(21, "session/send", {"sessionId": _SID, "prompt": "count to sixty"})),
                _c(_notification("$/cancelRequest", {"id": 21})),
                _b(_event(52, EVENT_EXAMPLES["userText"])),
                _b(
                    _result(
                        21,
                        {
                            "text": "word0 word1 ",
                            "isError": True,
                            "subtype": "error_during_execution",
                            "stopReason": None,
                            "terminalReason": "aborted_streaming",
                            "interrupted": True,
                            "costUsd": 0.00042,
                            "totalCostUsd": 0.05532,
                            "durationMs": 1012.6,
                            "numTurns": 2,
                            "claudeSessionId": _CLAUDE_SID,
                            "commandUuids": ["7d1f0c52-93ab-4e60-8c2d-5b7a1e9f4c36"],
                        },
                    )
                ),
            ),
            "Cancelling a `session/send` interrupts the turn; the request still gets its result.",
        ),
        Example(
            (
                _b(_request(3, "session/requestPermission", _PERMISSION_PARAMS)),
                _b(_notification("$/cancelRequest", {"id": 3})),
                _b(
                    _event(
                        7,
                        {
                            "type": "permissionAutoDenied",
                            "requestId": _PERMISSION_ID,
                            "toolName": "Bash",
                            "message": "Bash was denied: no answer within 300 s",
                        },
                    )
                ),
            ),
            "The bridge gave up waiting (`permissionTimeout`): it cancels its request and "
            "denies. A late answer is ignored.",
        ),
    ),
    "session/event": (
        Example(
            (_b(_event(5, EVENT_EXAMPLES["textDelta"])),),
            "Every event type is listed under [Session events](#session-events).",
        ),
    ),
    "session/exited": (
        Example(
            (
                _b(
                    _notification(
                        "session/exited",
                        {
                            "sessionId": "s2-9f3c1a7b",
                            "status": {
                                "state": "failed",
                                "signal": 9,
                                "stderrTail": "FATAL ERROR: Reached heap limit "
                                "Allocation failed - JavaScript heap out of memory\n",
                            },
                            "reason": "failed",
                        },
                    )
                ),
            ),
            "The CLI died on its own. A request waiting on it fails with ProcessFailed.",
        ),
        Example(
            (
                _b(
                    _notification(
                        "session/exited",
                        {
                            "sessionId": "s3-41d07c2e",
                            "status": {"state": "failed", "signal": 15},
                            "reason": "limit",
                            "error": "max_turn_bytes exceeded: 1048712 > 1048576",
                        },
                    )
                ),
            ),
            "A limit tripped (`limits.maxTurnBytes`): the bridge closed the session.",
        ),
    ),
    "session/requestPermission": (
        Example(
            (
                _b(
                    _request(
                        4,
                        "session/requestPermission",
                        {
                            "sessionId": _SID,
                            "requestId": "8fab82c1-8ca3-4c93-a135-69a8058ed067",
                            "toolName": "AskUserQuestion",
                            "input": _ASK_INPUT,
                            "displayName": "AskUserQuestion",
                            "toolUseId": "toolu_1795944286045998",
                            "requiresUserInteraction": True,
                        },
                    )
                ),
                _c(
                    _result(
                        4,
                        {
                            "behavior": "allow",
                            "updatedInput": {**_ASK_INPUT, "answers": {"Which colour?": "Blue"}},
                        },
                    )
                ),
            ),
            "AskUserQuestion is answered through a permission request: allow it with the "
            "user's answers added to the input. A plain Bash prompt is in the "
            "[`session/send`](#session-send) example.",
        ),
    ),
    "window/logMessage": (
        Example(
            (
                _b(
                    _notification(
                        "window/logMessage",
                        {
                            "type": 2,
                            "message": "warm pool preset ignored: invalid params for "
                            "session/create: Expected `str`, got `null` - at `$.cwd`",
                        },
                    )
                ),
            ),
        ),
    ),
    "$/progress": (
        Example(
            (
                _c(
                    _request(
                        22,
                        "session/send",
                        {"sessionId": _SID, "prompt": "run the tests", "workDoneToken": "t22"},
                    )
                ),
                _b(
                    _notification(
                        "$/progress",
                        {
                            "token": "t22",
                            "value": {"kind": "begin", "title": "Claude", "cancellable": True},
                        },
                    )
                ),
                _b(
                    _notification(
                        "$/progress",
                        {"token": "t22", "value": {"kind": "report", "message": "Running Bash"}},
                    )
                ),
                _b(
                    _notification(
                        "$/progress", {"token": "t22", "value": {"kind": "end", "message": "done"}}
                    )
                ),
                _b(_result(22, _turn("All 42 tests pass."))),
            ),
            "Events are left out. `end` carries `done`, `interrupted` or `error`.",
        ),
    ),
}
"""Example exchanges, by method: one or more for every method."""

ERROR_EXAMPLES: tuple[JsonObj, ...] = (
    _error(
        None,
        wire.ErrorCode.PARSE_ERROR,
        "parse error: JSON is malformed: trailing comma (byte 41)",
    ),
    _error(
        30,
        wire.ErrorCode.TURN_IN_FLIGHT,
        "a turn is already running; use send_message or interrupt",
    ),
    _error(
        31,
        wire.ErrorCode.PROCESS_FAILED,
        "the CLI exited (code 1) before the work ended; stderr: Error: Invalid API key",
        exitStatus={"state": "failed", "code": 1, "stderrTail": "Error: Invalid API key\n"},
    ),
    _error(
        32,
        wire.ErrorCode.LIMIT_EXCEEDED,
        "max_turn_bytes exceeded: 1048712 > 1048576",
        limit="max_turn_bytes",
    ),
)
"""Error responses shown in the errors section."""


def examples() -> Iterator[tuple[str, Example]]:
    """Every example exchange, with where it is shown."""
    for method in wire.METHODS:
        for example in METHOD_EXAMPLES.get(method.name, ()):
            yield method.name, example
    for tag, event in EVENT_EXAMPLES.items():
        yield f"event {tag}", Example((_b(_event(7, event)),))
    for error in ERROR_EXAMPLES:
        yield "errors", Example((_b(error),))


def canonicalize_examples() -> None:
    """Write into every example of the bridge's messages what the bridge really sends
    for it: each payload goes through its wire type and back, so members left out of
    the example text (defaults, nulls) appear exactly as the bridge encodes them."""
    for tag, event in EVENT_EXAMPLES.items():
        EVENT_EXAMPLES[tag] = msgspec.to_builtins(msgspec.convert(event, wire.Event))
    for _, example in examples():
        asked: dict[Any, str] = {}
        for step in example.steps:
            msg = step.message
            method_name = msg.get("method")
            spec = wire.METHODS_BY_NAME.get(method_name) if method_name else None
            if step.sender == "client":
                if spec is not None and spec.kind == "request":
                    asked[msg["id"]] = spec.name
                continue
            if step.invalid:
                continue
            answered = asked.get(msg.get("id")) if spec is None else None
            if spec is not None and spec.params is not None and "params" in msg:
                msg["params"] = _encoded(msg["params"], spec.params)
            elif "error" in msg and isinstance(msg["error"].get("data"), dict):
                msg["error"]["data"] = _encoded(msg["error"]["data"], wire.ErrorData)
            elif answered is not None and "result" in msg:
                result_type = wire.METHODS_BY_NAME[answered].result
                if result_type is not None:
                    msg["result"] = _encoded(msg["result"], result_type)


def _encoded(value: Any, typ: type) -> Any:
    return msgspec.to_builtins(msgspec.convert(value, typ))


def _same(a: Any, b: Any) -> bool:
    """Equal, with JSON types kept apart (``1`` is not ``1.0``, ``true`` is not ``1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _canonical(where: str, value: Any, typ: type | None) -> None:
    """``value`` is exactly what the bridge encodes for it (omitted defaults included)."""
    if typ is None:
        if value is not None:
            raise ValueError(f"example for {where}: expected null, got {value!r}")
        return
    try:
        encoded = msgspec.to_builtins(msgspec.convert(value, typ))
    except msgspec.ValidationError as exc:
        raise ValueError(f"example for {where}: not a valid {typ.__name__}: {exc}") from None
    if not _same(encoded, value):
        raise ValueError(
            f"example for {where}: the bridge would send {json.dumps(encoded)}, "
            f"the example says {json.dumps(value)}"
        )


def _accepts(where: str, value: Any, typ: type | None) -> None:
    """The bridge accepts ``value`` as a ``typ``."""
    if typ is None or value is None:
        return
    try:
        msgspec.convert(value, typ)
    except msgspec.ValidationError as exc:
        raise ValueError(f"example for {where}: the bridge rejects it: {exc}") from None


def check_examples(schema: JsonObj) -> bool:
    """Check every example: the bridge's messages are exactly what it encodes, the
    client's are accepted, and all validate against ``schema`` (when jsonschema is
    installed; returns False when it is not and only the first checks ran)."""
    try:
        import jsonschema  # type: ignore[import-untyped,unused-ignore]

        from bridge.testing.contract import ContractValidator
    except ImportError:
        jsonschema = None
    validator = ContractValidator(schema) if jsonschema is not None else None
    for where, example in examples():
        asked: dict[Any, str] = {}  # client request id -> method
        asking: dict[Any, str] = {}  # bridge request id -> method
        for step in example.steps:
            msg = step.message
            method_name = msg.get("method")
            spec = wire.METHODS_BY_NAME.get(method_name) if method_name else None
            if step.sender == "client":
                answered = asking.get(msg.get("id")) if spec is None else None
                if step.invalid:
                    if validator is not None and validator.is_valid(msg, "ClientMessage"):
                        raise ValueError(f"example for {where}: {msg} should be invalid")
                    if spec is not None and spec.kind == "request":
                        asked[msg["id"]] = spec.name
                    continue
                if validator is not None:
                    validator.validate_client_message(msg, request_method=answered)
                if spec is not None:
                    _accepts(where, msg.get("params"), spec.params)
                    if spec.kind == "request":
                        asked[msg["id"]] = spec.name
                elif answered is not None and "result" in msg:
                    _accepts(where, msg["result"], wire.METHODS_BY_NAME[answered].result)
            else:
                answered = asked.get(msg.get("id")) if spec is None else None
                if validator is not None:
                    validator.validate_server_message(msg, request_method=answered)
                if spec is not None:
                    _canonical(where, msg.get("params"), spec.params)
                    if spec.kind == "request":
                        asking[msg["id"]] = spec.name
                elif "error" in msg:
                    _canonical(where, msg["error"]["data"], wire.ErrorData)
                elif answered is not None:
                    _canonical(where, msg["result"], wire.METHODS_BY_NAME[answered].result)
    return validator is not None


# --------------------------------------------------------------------------- PROTOCOL.md


def _anchor(name: str) -> str:
    """The HTML anchor of a method (``session/send`` -> ``session-send``)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n\n", "<br><br>").replace("\n", " ")


def _type_md(schema: JsonObj) -> str:
    """A property's type, for a table cell (links to the types it names)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name})"
    if "anyOf" in schema:
        return " \\| ".join(_type_md(s) for s in schema["anyOf"])
    if len(schema.get("allOf", ())) == 1:
        return _type_md(schema["allOf"][0])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        inner = _type_md(schema.get("items", {}))
        return f"({inner})[]" if "\\|" in inner else f"{inner}[]"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return f"object of {_type_md(extra)}"
        return "object"
    return kind if isinstance(kind, str) else "any"


def _table(defs: JsonObj, name: str) -> list[str]:
    schema = defs[name]
    props: JsonObj = schema.get("properties", {})
    if not props:
        return ["An empty object: `{}`."]
    required = set(schema.get("required", []))
    lines = ["| Field | Type | Required | Description |", "|---|---|---|---|"]
    for field, prop in props.items():
        text = prop.get("description", "")
        if "default" in prop and prop["default"] is not None:
            default = f"Default: `{json.dumps(prop['default'])}`."
            text = f"{text} {default}" if text else default
        lines.append(
            f"| `{field}` | {_type_md(prop)} | {'yes' if field in required else 'no'} "
            f"| {_cell(text)} |"
        )
    return lines


def _pretty(value: Any, indent: int = 0, used: int = 0, width: int = 88) -> str:
    """JSON, indented like a person would: containers that fit on a line stay on it."""
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or not value or indent + used + len(flat) <= width:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            label = json.dumps(key, ensure_ascii=False) + ": "
            items.append(pad + label + _pretty(item, indent + 2, len(label), width))
    else:
        items = [pad + _pretty(item, indent + 2, 0, width) for item in value]
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + "\n" + ",\n".join(items) + "\n" + " " * indent + closing


def _json_block(steps: tuple[Step, ...]) -> list[str]:
    lines = ["```jsonc"]
    for step in steps:
        arrow = "client → bridge" if step.sender == "client" else "bridge → client"
        lines.append(f"// {arrow}")
        lines.append(_pretty(step.message))
    lines.append("```")
    return lines


class _Doc:
    """PROTOCOL.md, built section by section."""

    def __init__(self, schema: JsonObj) -> None:
        self.defs: JsonObj = schema["$defs"]
        self.lines: list[str] = []
        self.anchored: set[str] = set()

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def text(self) -> str:
        return "\n".join(self.lines).rstrip() + "\n"

    def type_section(self, title: str, name: str | None) -> None:
        """``**Params**``/``**Result**`` of a method: the type's description and table."""
        if name is None:
            return
        anchor = ""
        if name not in self.anchored:
            self.anchored.add(name)
            anchor = f'<a id="{name}"></a>'
        description = self.defs[name].get("description", "")
        self.add(f"{anchor}**{title}** — `{name}`: {description}", "")
        self.add(*_table(self.defs, name), "")

    def method(self, method: wire.Method) -> None:
        arrow = {
            "clientToServer": "client → bridge",
            "serverToClient": "bridge → client",
            "both": "both ways",
        }[method.direction]
        self.add(f'<a id="{_anchor(method.name)}"></a>', "", f"### `{method.name}`", "")
        self.add(f"*{method.kind}, {arrow}.* {method.summary}", "")
        if method.params is None:
            self.add("**Params**: none (omit `params`).", "")
        else:
            title = "Params (may be omitted)" if method.params_optional else "Params"
            self.type_section(title, method.params.__name__)
        if method.kind == "request":
            if method.result is None:
                self.add("**Result**: `null`.", "")
            else:
                self.type_section("Result", method.result.__name__)
            codes = method_errors(method)
            if codes:
                listed = ", ".join(f"[{wire.ERRORS[c][0]}](#errors) ({c})" for c in codes)
                self.add(f"**Errors**: {listed}.", "")
        for example in METHOD_EXAMPLES.get(method.name, ()):
            self.add("**Example**", "", *_json_block(example.steps), "")
            if example.note:
                self.add(example.note, "")

    def struct(self, name: str, title: str | None = None) -> None:
        self.anchored.add(name)
        self.add(f'<a id="{name}"></a>', "", f"### {title or f'`{name}`'}", "")
        description = self.defs[name].get("description", "")
        if description:
            self.add(description, "")
        self.add(*_table(self.defs, name), "")


_INTRO = """\
# claude-duplex-bridge protocol {version}

<!-- Generated by `claude-bridge schema` from bridge/rpc/wire.py. Do not edit by hand. -->

The bridge serves long-lived Claude Code sessions to editors and other hosts over
JSON-RPC 2.0 on its stdin/stdout. Start it as `claude-bridge` (or
`python -m bridge`), send `initialize`, create a session, send turns, and read
events. This document is the reference; it is generated from the same types the
bridge encodes its messages with, and every example below is validated against
the schema when it is generated.

Machine-readable companions, in this directory:

- [`bridge.schema.json`](bridge.schema.json): JSON Schema 2020-12 of every
  message. `$defs/ClientMessage` validates what a client sends,
  `$defs/ServerMessage` what the bridge sends; `$defs/<Method>Request`,
  `<Method>Response` and `<Method>Notification` are the envelopes per method.
- [`methods.json`](methods.json): the method table (direction, kind, params and
  result types, error codes).

## Contents

- [Conventions](#conventions)
- [Framing](#framing)
- [Lifecycle](#lifecycle)
- [Methods](#methods)
- [Session events](#session-events)
- [Types](#types)
- [Errors](#errors)
- [Permissions](#permissions)
- [Cancellation](#cancellation)
- [Ordering, backpressure and coalescing](#backpressure)
- [History and recovery](#history)
- [Compatibility](#compatibility)

<a id="conventions"></a>

## Conventions

- Messages are JSON-RPC 2.0 objects; batches are not supported (an array gets an
  InvalidRequest error). Request ids are integers or strings (not booleans,
  fractions, objects or arrays); the bridge numbers its own requests 1, 2, 3, ...
  A reply whose `id` matches none of its pending requests is ignored.
- Keys are camelCase. The CLI's own data passed through untouched (`usage`,
  `initialize`, `frame`, `input`, ...) keeps the CLI's keys.
- **The bridge sends every member** of its messages, defaults included; an
  optional member without a value is `null`. The schema marks every member of
  what only the bridge sends as required. Clients may omit optional members of
  their params (the tables give every default), and should read a member
  missing from the bridge's messages as its default, for robustness across
  versions.
- **An empty array stands for an empty object** wherever the bridge expects an
  object (params, `capabilities`, `env`, `limits`, ...): Lua has one table type,
  and Neovim's `vim.json.encode({{}})` is `[]`. A non-empty array stays an error.
- Strings may hold lone UTF-16 surrogate escapes (`"\\ud800"`, which
  `JSON.stringify` emits for half a pair): each is read as U+FFFD. Nesting deeper
  than about 900 levels is a ParseError.
- Numbers have ranges where it matters (timeouts above 0, sizes and counts at
  least 1, environment names without `=`); the schema shows them, and a value
  out of range, or a NUL character in a `session/create` string, is
  InvalidParams with `data.path` naming the member.
- Unknown members in params are ignored, and so are unknown notifications
  (`$/setTrace`, ...). An unknown request gets MethodNotFound.
- Requests run concurrently: answers may come in any order, and a long
  `session/send` does not hold up other requests.
- Costs are USD, durations milliseconds, timeouts seconds.
"""

_FRAMING = """\
<a id="framing"></a>

## Framing

The bridge speaks two framings and detects which one from the first non-blank
byte the client sends:

- `{{` or `[`: **newline-delimited JSON** (NDJSON), one message per line, as ACP
  clients and `vim.system` plugins write it. Blank lines are skipped.
- anything else: **LSP base protocol** headers, as vscode-jsonrpc, `vim.lsp.rpc`
  and `jsonrpc.el` write them: `Content-Length: <bytes>\\r\\n`, optional other
  headers (ignored), `\\r\\n`, then the UTF-8 JSON body.

The bridge answers in the client's framing, for the whole connection. Its own
messages never contain a raw newline, so an NDJSON client can split on `\\n`.

A UTF-8 byte order mark before the first message is skipped. Header lines may
end in `\\r\\n` or a bare `\\n`.

A message larger than `--max-message-bytes` (default 64 MiB) is answered with
MessageTooLarge (`id` null) as soon as its size is known, and skipped without
being buffered. A malformed header block (no usable `Content-Length`, a missing
blank line, an NDJSON line among headers) gets ParseError. Either way the bridge
keeps serving: with `Content-Length` framing it **resynchronises on the next
`Content-Length: <digits>` line**. Such a line cannot occur inside a valid JSON
body, so a body that holds one (its length was wrong, or it was glued to the
next message) ends there. Nothing but protocol messages is ever written to
stdout; diagnostics go to `--log-file` (created private, mode 0600: every error
answered, every session start and exit) and `window/logMessage`, never to
stderr unless `--verbose`.

A client that sends without reading is not read either: while more than
`--max-unwritten-bytes` (default 4 MiB) of answers wait to be written, the
bridge stops reading its input until the client catches up. Nothing is lost.
"""

_LIFECYCLE = """\
<a id="lifecycle"></a>

## Lifecycle

1. The client sends **`initialize`** (params may be omitted) and reads the
   result; as in LSP, any other request before it is refused with
   ServerNotInitialized (-32002) (notifications are ignored, `exit` exits). The
   result gives `protocolVersion` (see [Compatibility](#compatibility)), the CLI the
   bridge found (`cliPath`, `cliVersion`; the version is null when
   `claude --version` takes more than a second, so a slow CLI never holds up
   `initialize`) and its capabilities. In
   `initializationOptions` it declares **`permissions: true` if it answers
   permission prompts** (see [Permissions](#permissions)); it may also set
   `permissionTimeout` and a warm pool (`warmPool`) of spare CLI processes.
2. It sends the **`initialized`** notification (optional; ignored).
3. Sessions: `session/create` spawns one `claude` process and answers once the
   CLI has completed its handshake; `session/send` runs a turn on it, as often
   as wanted; `session/close` ends it. A connection may hold many sessions.
   Each session's events arrive as `session/event` notifications; when its
   process ends for any reason, `session/exited` follows its last event.
   A session that ended is released; it still answers `session/status`,
   `session/list` and `session/close` (its last status) for 10 minutes, the
   last 256 of them (`--keep-closed`), other methods with SessionClosed; after
   that its id is SessionNotFound.
4. **`shutdown`** closes every session (each process is reaped) and answers
   `null`; afterwards every request is refused with InvalidRequest.
5. **`exit`** ends the bridge: exit code 0 after `shutdown`, 1 without.

If the client's input ends (its pipe closes), or the bridge gets SIGTERM, SIGINT
or SIGHUP, it closes every session the same way and exits: no `claude` process
outlives the bridge.
"""

_PERMISSIONS = """\
<a id="permissions"></a>

## Permissions

When the CLI wants to run a tool its permission mode and rules do not already
allow, it asks; the bridge turns the question into a `session/requestPermission`
**request to the client** — but only if the client declared
`initializationOptions.permissions: true` in `initialize`.

The client answers with a [`PermissionDecision`](#PermissionDecision):

- `{{"behavior": "allow"}}` runs the tool with its input. `updatedInput` runs it
  with another input instead (for AskUserQuestion: the input plus the user's
  `answers`); `updatedPermissions` adds permission rules, typically some of the
  request's `suggestions`, so the CLI stops asking.
- `{{"behavior": "deny", "message": "..."}}` refuses; the model is told `message`
  (default "Denied by the user."). `"interrupt": true` also stops the turn.
- `{{"behavior": "defer"}}` leaves the question open: the turn waits, the
  request id is listed in `session/status`'s `pendingPermissions`, and the client
  answers later with `session/respondPermission` (allow or deny; an unknown or
  already answered request id gets UnknownRequest).

The bridge never hangs on a client that cannot answer. It denies by itself, and
reports it with a `permissionAutoDenied` event, when:

- the client did not declare `permissions: true` (every prompt is denied at once
  and the client is never asked);
- the client answers with an error response, or with a result that is not a
  valid decision;
- no answer came within `permissionTimeout` seconds (from `session/create`, else
  from `initialize`; default: wait as long as it takes). The bridge then sends
  `$/cancelRequest` for its request; a late answer is ignored.
"""

_CANCELLATION = """\
<a id="cancellation"></a>

## Cancellation

A client cancels one of its requests with the `$/cancelRequest` notification,
`{{"id": <the request's id>}}`:

- On a pending **`session/send`** it interrupts the turn, exactly like
  `session/interrupt`: the CLI process stays, and the `session/send` request
  still gets its normal result, with `interrupted: true` — not an error.
- On any other pending request the bridge abandons the work and answers
  RequestCancelled (-32800).
- An id that is not pending (already answered, unknown) is ignored.

The bridge sends `$/cancelRequest` too, for a `session/requestPermission` it no
longer needs answered: it timed out (and was denied), or its turn or session
ended. Clients should close the prompt; an answer sent anyway is ignored.
"""

_BACKPRESSURE = """\
<a id="backpressure"></a>

## Ordering, backpressure and coalescing

One writer sends everything, in two lanes:

- **Urgent**: responses, the bridge's requests (`session/requestPermission`),
  `window/logMessage` and `$/progress` go out ahead of every queued event, so a
  client that reads events slowly still gets its answers and permission prompts
  at once. Permission prompts and control answers are never stuck behind events.
- **Events**: `session/event` (and each session's final `session/exited`) wait
  in one bounded FIFO (`--max-queued-events`, default 4096).

Guarantees a client can rely on:

- Each session's events arrive in order, numbered by `seq` 1, 2, 3, ... without
  gaps. `session/exited` comes after the session's last event.
- A `session/send` result is normally sent after the events of its turn. This
  is best effort, not a guarantee: the bridge waits at most 2 s for those events
  to be written, so with a client that reads slowly the result may overtake
  some of them (their `seq` still orders them).
- **Deltas are coalesced, never dropped.** While a `textDelta`, `thinkingDelta`
  or `toolInputDelta` still waits in the queue, a later delta of the same
  session, block `index` and `parentToolUseId` is appended to it. A slow client
  receives fewer, larger deltas carrying exactly the same text; never assume one
  delta per model token.
- When the FIFO is full the bridge stops taking events from the session, whose
  own buffer (8192 events) absorbs the burst. Only if that overflows too are
  events dropped, and then a `lagged` event says how many (`missed`). Since
  `seq` numbers what is written, `lagged` is the one sign of loss: a client that
  needs every CLI frame should read fast enough or re-read state with
  `session/status`.
"""

_HISTORY = """\
<a id="history"></a>

## History and recovery

The CLI keeps every conversation as a transcript under its config directory
(`$CLAUDE_CONFIG_DIR`, else `~/.claude`, as the bridge's environment has them), per
project directory. The bridge reads them the way the CLI does:

- **List** a project's earlier conversations with `session/history` (newest first,
  paged with `limit` and `offset`; `total` counts them all). `liveSessionId` names
  the bridge session holding one now.
- **Show** one without starting a CLI with `session/transcript`: the same
  `userText`, `assistantText`, `thinking`, `toolUse` and `toolResult` events a live
  turn sends, in order. Like the CLI, it follows the conversation's chain: side
  chains and meta entries are left out, and a compacted conversation starts at its
  compaction summary.
- **Reopen** one with `session/create` `{{"resume": claudeSessionId, "replay": true}}`:
  before the create answer, its past messages arrive as `session/event`s with
  `replay: true` (numbered by the session's usual `seq`), so a host renders them
  with the renderer it uses for live turns; then turns continue the conversation.
- **Rename** with `session/renameHistory` (the entry the CLI's own `/rename`
  writes) and **delete** with `session/deleteHistory`
  (refused with ConversationInUse while a live session holds the conversation).

**Recovery after a crash.** When a session's CLI dies (`session/exited` with reason
`failed`), `session/status` of that session still answers for a while, with its
`claudeSessionId`. `session/create` with `resume` set to it starts a new CLI that
continues the conversation with every completed turn in context (add `replay: true`
to redraw it). The turn that was running when the CLI died may be missing: the CLI
writes its transcript in batches, so a host that wants it kept sends that prompt again.
"""

_CLI_VERSIONS = """\
<a id="cli-versions"></a>

## CLI versions and fallbacks

The bridge runs whatever `claude` the user has. It supports **{minimum} and newer**
(CI runs the real-CLI suite against {tested}); an older CLI still runs, and
`initialize` (`cli.supported: false`), a `window/logMessage` warning and the
bridge's log say so. [`CliInfo`](#CliInfo) (`cli` in the results of `initialize`,
`session/create` and `session/status`) reports the CLI's `version` and the
`capabilities` it advertises. The CLI advertises them in its `system/init` at the
start of every turn (the `init` event carries them too), so they are null until a
session's first turn started, unless an earlier session of the same executable
already showed them. A CLI that advertises no list at all (2.1.176) is `legacy`:
it has none of them. Null always means "not known", never "none".

What the bridge does when the session's CLI lacks a capability:

- **`msg_lifecycle_v1`**: no `commandLifecycle` events come. A turn still ends
  right: each input (the prompt, each `session/message`) ends with its own
  `result`, in order.
- **`interrupt_receipt_v1`**: `session/interrupt` answers `stillQueued: null,
  cancelled: null`: the CLI does not say, so the bridge does not guess `[]`.
  Queued messages still run to their own results.
- **`interrupt_cancel_queued_v1`**: `session/interrupt` with `cancelQueued: true`
  is refused with Unsupported ({unsupported}; `data.capability` names it) and
  interrupts nothing: such a CLI ignores the flag and runs the queued messages
  anyway, and a message already written cannot be taken back. Interrupt without it.

Differences in what older CLIs print are evened out as well:

- A result that carries an API error status has `terminalReason: "api_error"`
  (in `session/send`'s result and the `result` event), also where 2.1.176 says
  `completed`.
- A `session/requestPermission` for AskUserQuestion has
  `requiresUserInteraction: true`, also where 2.1.176 leaves the field out.
- `session/setModel` answers the model that was set, whether or not the CLI
  echoed it.
"""

_COMPATIBILITY = """\
<a id="compatibility"></a>

## Compatibility

`initialize` reports `protocolVersion`, `"{version}"` for this document, as
`MAJOR.MINOR`.

Within a major version the protocol only grows. A minor version may add:

- optional params members (an older bridge ignores members it does not know);
- members in results, notifications, events and error `data`;
- event types, notification methods and request methods;
- error codes, and values of open string members (`subtype`, `stopReason`,
  `status`, ...).

So clients **must ignore members they do not know, ignore `session/event`
types and notifications they do not know, and treat an unknown error code as a
plain failure** (show `message`; `data.kind` names it). A client may check a
capability or `protocolVersion` before using something newer than 1.0.

Removing or renaming a method, member or event type, changing a member's type
or meaning, making an optional params member required, changing an error
code's meaning, or changing framing or lifecycle bumps the major version.

The schema describes what this version sends: its unions of events and messages
are closed. Do not validate a newer bridge's messages against an older schema.
"""


def build_protocol(schema: JsonObj) -> str:
    """PROTOCOL.md."""
    version = wire.PROTOCOL_VERSION
    doc = _Doc(schema)
    doc.add(_INTRO.format(version=version), _FRAMING.format(), _LIFECYCLE)

    doc.add('<a id="methods"></a>', "", "## Methods", "")
    doc.add("| Method | Kind | Direction | Summary |", "|---|---|---|---|")
    for m in wire.METHODS:
        arrow = {"clientToServer": "→ bridge", "serverToClient": "→ client", "both": "both"}
        doc.add(
            f"| [`{m.name}`](#{_anchor(m.name)}) | {m.kind} | {arrow[m.direction]} "
            f"| {_cell(m.summary)} |"
        )
    doc.add("")
    for m in wire.METHODS:
        doc.method(m)

    doc.add('<a id="session-events"></a>', "", "## Session events", "")
    doc.add(
        '<a id="Event"></a>`session/event` carries one event; its `type` says which. '
        "Clients must ignore types they do not know (see [Compatibility](#compatibility)).",
        "",
        "| `type` | Event | Summary |",
        "|---|---|---|",
    )
    for cls in event_types():
        description = doc.defs[cls.__name__].get("description", "")
        doc.add(
            f"| `{event_tag(cls)}` | [{cls.__name__}](#{cls.__name__}) | {_cell(description)} |"
        )
    doc.add("")
    for cls in event_types():
        tag = event_tag(cls)
        doc.struct(cls.__name__, title=f"`{tag}` ({cls.__name__})")
        doc.add("```json", _pretty(EVENT_EXAMPLES[tag]), "```", "")

    doc.add('<a id="types"></a>', "", "## Types", "")
    doc.add("Types used inside params, results and events.", "")
    shown = set(doc.anchored) | {"ErrorData"}
    for cls in wire_types():
        if cls.__name__ not in shown:
            doc.struct(cls.__name__)

    doc.add('<a id="errors"></a>', "", "## Errors", "")
    doc.add(
        "A failed request is answered with a JSON-RPC error: `code` (below), `message` "
        "(for a person) and `data`, an [`ErrorData`](#ErrorData) whose `kind` is the "
        "code's name.",
        "",
        _clean(inspect.getdoc(wire.ErrorCode) or ""),
        "",
        "Each method lists the codes it returns. Any request may also get "
        + ", ".join(f"{wire.ERRORS[c][0]} ({c})" for c in GENERIC_ERRORS)
        + "; every method with params may get InvalidParams.",
        "",
        "| Code | Name | When |",
        "|---|---|---|",
    )
    for code, (name, doc_text) in wire.ERRORS.items():
        doc.add(f"| {code} | {name} | {_cell(doc_text)} |")
    doc.add("")
    doc.struct("ErrorData")
    doc.add("**Examples**", "", *_json_block(tuple(_b(e) for e in ERROR_EXAMPLES)), "")

    doc.add(_PERMISSIONS.format(), _CANCELLATION.format(), _BACKPRESSURE, _HISTORY.format())
    doc.add(
        _CLI_VERSIONS.format(
            minimum=MIN_CLI_VERSION,
            tested=", ".join(TESTED_CLI_VERSIONS),
            unsupported=wire.ErrorCode.UNSUPPORTED,
        )
    )
    doc.add(_COMPATIBILITY.format(version=version))
    return doc.text()


# --------------------------------------------------------------------------- output


def _dump(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


canonicalize_examples()


def generate() -> dict[str, bytes]:
    """Every file of ``schema/``, by name."""
    schema = build_schema()
    if not check_examples(schema):
        print(
            "warning: jsonschema is not installed; PROTOCOL.md examples were not validated "
            "against the schema (pip install jsonschema)",
            file=sys.stderr,
        )
    return {
        SCHEMA_FILE: _dump(schema),
        METHODS_FILE: _dump(build_methods()),
        PROTOCOL_FILE: build_protocol(schema).encode(),
    }


def _differs(out: Path, files: dict[str, bytes]) -> Iterator[str]:
    for name, content in sorted(files.items()):
        path = out / name
        if not path.is_file() or path.read_bytes() != content:
            yield str(path)


def main(out: str, check: bool = False) -> int:
    """Write ``schema/`` into ``out``; with ``check``, only report files that differ."""
    files = generate()
    target = Path(out)
    if check:
        stale = list(_differs(target, files))
        if stale:
            print("schema files are out of date with bridge/rpc/wire.py:", file=sys.stderr)
            for stale_path in stale:
                print(f"  {stale_path}", file=sys.stderr)
            print("run `claude-bridge schema` and commit the result", file=sys.stderr)
            return 1
        return 0
    target.mkdir(parents=True, exist_ok=True)
    for name, content in sorted(files.items()):
        path = target / name
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
    return 0
