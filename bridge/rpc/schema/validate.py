"""Validate every example: the bridge's messages are exactly what it encodes, the
client's are accepted, and all match the schema."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .. import wire
from .build import JsonObj
from .examples import examples


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

        from .contract import ContractValidator
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
