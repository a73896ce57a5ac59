"""Check messages against the bridge's published contract (``schema/bridge.schema.json``).

For end-to-end tests and host authors::

    from bridge.rpc.schema.contract import ContractValidator

    contract = ContractValidator()
    contract.validate_client_message({"jsonrpc": "2.0", "id": 1, "method": "session/list"})
    contract.validate_server_message(reply, request_method="session/list")

The schema is built in memory from :mod:`bridge.rpc.wire` by the same function
that writes ``schema/`` (so this works from an installed package, and the
committed files are checked against it by the drift test). Each message is
validated against the definition its ``method`` (or the answered request's
method) selects, so a failure names the exact field instead of "not valid under
any of the given schemas". Failures raise :class:`jsonschema.ValidationError`.

Needs the ``jsonschema`` package (in the ``test`` extra) once a validator is built;
importing this module does not.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .. import wire
from . import build as _build
from . import methods as _methods

if TYPE_CHECKING:
    import jsonschema  # type: ignore[import-untyped,unused-ignore]
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

__all__ = ["ContractValidator"]

_Message = Mapping[str, Any]


class ContractValidator:
    """Validates JSON-RPC messages of the bridge protocol, one direction at a time."""

    def __init__(self, schema: dict[str, Any] | None = None) -> None:
        _jsonschema()  # fails here, not at import, without the package
        self.schema = schema if schema is not None else _build.build_schema()
        self.defs: dict[str, Any] = self.schema["$defs"]
        self._validators: dict[str, Draft202012Validator] = {}
        self._event_defs = {_build.event_tag(t): t.__name__ for t in _build.event_types()}

    # ------------------------------------------------------------------ public

    def validate_client_message(self, msg: _Message, *, request_method: str | None = None) -> None:
        """Check a message a client sends. A response to a bridge request is checked
        against ``request_method``'s result (``session/requestPermission`` or
        ``session/callTool``; default: ``session/requestPermission``)."""
        self._check_object(msg, "client")
        if "method" in msg:
            self._check_call(msg, "clientToServer", "client")
            return
        if "error" in msg:
            self.validate(msg, "ClientErrorResponse")
            return
        method = self._method(request_method or "session/requestPermission", "client")
        if not _build.sends(method, "serverToClient") or method.kind != "request":
            raise _jsonschema().ValidationError(
                f"client message: {method.name!r} is not a request the bridge sends, "
                "so a client never answers it"
            )
        self.validate(msg, _build.envelope_name(method.name, "Response"))

    def validate_server_message(self, msg: _Message, *, request_method: str | None = None) -> None:
        """Check a message the bridge sends. A response (result or error) is checked
        against the method of the request it answers, when ``request_method`` is given:
        its result type, or an error code that method documents (or a generic one)."""
        self._check_object(msg, "server")
        if "method" in msg:
            self._check_call(msg, "serverToClient", "server")
            return
        if "error" in msg:
            self.validate(msg, "ErrorResponse")
            if request_method is not None:
                self._check_error_code(msg, self._method(request_method, "server"))
            return
        if request_method is None:
            self.validate(msg, "ServerMessage")
            return
        method = self._method(request_method, "server")
        if not _build.sends(method, "clientToServer") or method.kind != "request":
            raise _jsonschema().ValidationError(
                f"server message: {method.name!r} is not a request a client sends, "
                "so the bridge never answers it"
            )
        self.validate(msg, _build.envelope_name(method.name, "Response"))

    def validate(self, instance: Any, definition: str) -> None:
        """Check ``instance`` against ``$defs/<definition>``, with a readable error."""
        validator = self._validator(definition)
        error = _jsonschema().exceptions.best_match(validator.iter_errors(instance))
        if error is None:
            return
        if definition.endswith("Notification") and _is_event_notification(instance):
            error = self._event_error(instance) or error
        error.message = f"{definition}: {error.message} (at {error.json_path})"
        raise error

    def is_valid(self, instance: Any, definition: str) -> bool:
        """Whether ``instance`` matches ``$defs/<definition>``."""
        return bool(self._validator(definition).is_valid(instance))

    # ------------------------------------------------------------------ internals

    def _validator(self, definition: str) -> Draft202012Validator:
        validator = self._validators.get(definition)
        if validator is None:
            if definition not in self.defs:
                raise KeyError(f"no definition {definition!r} in the schema")
            root = {"$schema": _build.DIALECT, "$defs": self.defs, "$ref": f"#/$defs/{definition}"}
            validator = _jsonschema().Draft202012Validator(root)
            self._validators[definition] = validator
        return validator

    @staticmethod
    def _check_object(msg: Any, side: str) -> None:
        if not isinstance(msg, Mapping):
            raise _jsonschema().ValidationError(
                f"{side} message: a JSON-RPC message is an object, got {type(msg).__name__}"
            )

    def _method(self, name: str, side: str) -> wire.Method:
        method = wire.METHODS_BY_NAME.get(name)
        if method is None:
            raise _jsonschema().ValidationError(
                f"{side} message: unknown method {name!r} "
                f"(the protocol has: {', '.join(m.name for m in wire.METHODS)})"
            )
        return method

    def _check_call(self, msg: _Message, direction: str, side: str) -> None:
        name = msg["method"]
        if not isinstance(name, str):
            raise _jsonschema().ValidationError(f"{side} message: method must be a string")
        method = self._method(name, side)
        if not _build.sends(method, direction):
            raise _jsonschema().ValidationError(
                f"{side} message: {name!r} is sent the other way ({method.direction})"
            )
        is_request = "id" in msg
        if is_request != (method.kind == "request"):
            raise _jsonschema().ValidationError(
                f"{side} message: {name!r} is a {method.kind}, "
                + ("so it has no id" if method.kind == "notification" else "so it needs an id")
            )
        suffix = "Request" if is_request else "Notification"
        self.validate(msg, _build.envelope_name(name, suffix))

    def _check_error_code(self, msg: _Message, method: wire.Method) -> None:
        code = msg["error"]["code"]
        allowed = set(_methods.method_errors(method)) | set(_methods.GENERIC_ERRORS)
        if code not in allowed:
            name = wire.ERRORS.get(code, ("?", ""))[0]
            raise _jsonschema().ValidationError(
                f"ErrorResponse: error {code} ({name}) is not documented for {method.name} "
                f"(documented: {sorted(allowed)}); add it to the method's errors in "
                "bridge/rpc/wire/methods.py METHODS if the bridge really returns it"
            )

    def _event_error(self, msg: Any) -> jsonschema.ValidationError | None:
        """A precise error for a ``session/event`` whose event is wrong."""
        event = msg.get("params", {}).get("event")
        if not isinstance(event, Mapping):
            return None
        tag = event.get("type")
        definition = self._event_defs.get(tag) if isinstance(tag, str) else None
        if definition is None:
            return _jsonschema().ValidationError(
                f"unknown event type {tag!r} (the bridge sends: {', '.join(self._event_defs)})",
                path=["params", "event", "type"],
            )
        error = _jsonschema().exceptions.best_match(self._validator(definition).iter_errors(event))
        if error is None:
            return None
        return _jsonschema().ValidationError(
            f"{definition}: {error.message}",
            path=["params", "event", *error.path],
        )


def _is_event_notification(msg: Any) -> bool:
    return (
        isinstance(msg, Mapping)
        and msg.get("method") == "session/event"
        and isinstance(msg.get("params"), Mapping)
    )


def _jsonschema() -> ModuleType:
    return importlib.import_module("jsonschema")
