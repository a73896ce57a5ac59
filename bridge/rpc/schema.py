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
from typing import Any

import msgspec

from . import wire

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
    """``{class name: {python field name: docstring}}`` read from wire.py's source.

    msgspec does not see field docstrings (plain string literals after a field),
    so they are taken from the syntax tree.
    """
    tree = ast.parse(inspect.getsource(wire))
    out: dict[str, dict[str, str]] = {}
    for node in tree.body:
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
            and issubclass(value, wire._Wire)
            and value.__module__ == wire.__name__
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
        "description": "The event.",
    }
    _walk(defs, _open_objects)
    return defs


def _error_defs() -> JsonObj:
    codes = [
        {"const": code, "title": name, "description": doc}
        for code, (name, doc) in wire.ERRORS.items()
    ]
    return {
        "ErrorCode": {
            "title": "ErrorCode",
            "description": _clean(inspect.getdoc(wire.ErrorCode) or ""),
            "type": "integer",
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


# --------------------------------------------------------------------------- output


def _dump(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def generate() -> dict[str, bytes]:
    """Every file of ``schema/``, by name."""
    schema = build_schema()
    files = {SCHEMA_FILE: _dump(schema), METHODS_FILE: _dump(build_methods())}
    return files


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
