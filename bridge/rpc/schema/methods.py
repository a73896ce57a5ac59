"""The method table (``methods.json``) and the error codes each method documents."""

from __future__ import annotations

from .. import wire
from .build import SCHEMA_FILE, JsonObj, def_ref, envelope_name

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
            "envelope": def_ref(envelope_name(m.name, kind_suffix)),
            "params": def_ref(m.params.__name__) if m.params is not None else None,
            "paramsOptional": m.params is None or m.params_optional,
        }
        if m.kind == "request":
            entry["result"] = def_ref(m.result.__name__) if m.result is not None else None
            entry["response"] = def_ref(envelope_name(m.name, "Response"))
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
