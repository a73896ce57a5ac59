"""The JSON Schema of the protocol (``bridge.schema.json``), built from :mod:`bridge.rpc.wire`.

``$defs`` holds every params, result, event and error type, plus one envelope per
method (``<Method>Request``, ``<Method>Response``, ``<Method>Notification``),
``ErrorResponse``, and the unions ``ClientMessage`` and ``ServerMessage``.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from collections.abc import Callable
from typing import Any

import msgspec

from .. import wire
from ..wire.common import _Wire

SCHEMA_FILE = "bridge.schema.json"
METHODS_FILE = "methods.json"
PROTOCOL_FILE = "PROTOCOL.md"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
_REF = "#/$defs/{name}"

JsonObj = dict[str, Any]


def def_ref(name: str) -> JsonObj:
    """A reference to ``$defs/<name>``."""
    return {"$ref": _REF.format(name=name)}


# --------------------------------------------------------------------------- docstrings


def clean_doc(text: str) -> str:
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
                docs[first.target.id] = clean_doc(second.value.value)
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
            schema["description"] = clean_doc(class_doc)
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
        **def_ref("Event"),
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
            "description": clean_doc(inspect.getdoc(wire.ErrorCode) or ""),
            "oneOf": codes,
        },
        "ResponseError": {
            "title": "ResponseError",
            "description": "The `error` member of an error response from the bridge.",
            "type": "object",
            "properties": {
                "code": def_ref("ErrorCode"),
                "message": {
                    "type": "string",
                    "description": "What went wrong, written for a person.",
                },
                "data": def_ref("ErrorData"),
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
                "id": {"anyOf": [def_ref("RequestId"), {"type": "null"}]},
                "error": def_ref("ResponseError"),
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
                "id": def_ref("RequestId"),
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
    ref = def_ref(method.params.__name__)
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
                "id": def_ref("RequestId"),
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
                def_ref(method.result.__name__)
                if method.result is not None
                else {"type": "null", "description": "Always null."}
            )
            defs[envelope_name(method.name, "Response")] = {
                "title": envelope_name(method.name, "Response"),
                "description": f"The successful answer to `{method.name}`.",
                "type": "object",
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "id": def_ref("RequestId"),
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
            client.append(def_ref(envelope_name(method.name, kind)))
        if sends(method, "serverToClient"):
            server.append(def_ref(envelope_name(method.name, kind)))
    for method in wire.METHODS:
        if method.kind != "request":
            continue
        if sends(method, "serverToClient"):
            client.append(def_ref(envelope_name(method.name, "Response")))
        if sends(method, "clientToServer"):
            server.append(def_ref(envelope_name(method.name, "Response")))
    client.append(def_ref("ClientErrorResponse"))
    server.append(def_ref("ErrorResponse"))
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
        if clash:  # pragma: no cover - a naming mistake in bridge/rpc/wire/
            raise ValueError(f"schema definitions defined twice: {sorted(clash)}")
        defs.update(part)
    return {
        "$schema": DIALECT,
        "$comment": "Generated by `claude-bridge schema` from bridge/rpc/wire/. Do not edit.",
        "title": "BridgeMessage",
        "description": f"claude-duplex-bridge protocol {wire.PROTOCOL_VERSION}: any JSON-RPC "
        "message of either direction. Validate with `$defs/ClientMessage` or "
        "`$defs/ServerMessage` to check one direction.",
        "anyOf": [def_ref("ClientMessage"), def_ref("ServerMessage")],
        "$defs": defs,
    }
