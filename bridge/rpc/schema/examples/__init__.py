"""The example exchanges of PROTOCOL.md, as data, and their canonical form.

The data modules hold the examples as written (members the bridge always sends may
be left out); :func:`canonical` returns them as the bridge really sends them, built
once on first use.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any, NamedTuple

import msgspec

from ... import wire
from . import connection, notifications, sessions, tools, turns
from .events import ERROR_EXAMPLES, EVENT_EXAMPLES
from .kit import Example, JsonObj, Step, event, from_bridge

__all__ = ["Example", "Examples", "Step", "canonical", "examples", "from_bridge"]


class Examples(NamedTuple):
    """Every example: exchanges by method, one event per ``type``, error responses."""

    methods: dict[str, tuple[Example, ...]]
    events: dict[str, JsonObj]
    errors: tuple[JsonObj, ...]


@functools.cache
def canonical() -> Examples:
    """The examples with every message of the bridge's written as the bridge sends it:
    each payload goes through its wire type and back, so members left out of the
    example text (defaults, nulls) appear exactly as the bridge encodes them."""
    methods: dict[str, tuple[Example, ...]] = {}
    for module in (connection, turns, sessions, notifications, tools):
        for name, shown in copy.deepcopy(module.METHOD_EXAMPLES).items():
            methods[name] = methods.get(name, ()) + shown
    events = {tag: _encoded(value, wire.Event) for tag, value in EVENT_EXAMPLES.items()}
    found = Examples(methods, events, copy.deepcopy(ERROR_EXAMPLES))
    for _, example in _exchanges(found):
        _canonicalize(example)
    return found


def examples() -> Iterator[tuple[str, Example]]:
    """Every example exchange (canonical), with where it is shown."""
    return _exchanges(canonical())


def _exchanges(found: Examples) -> Iterator[tuple[str, Example]]:
    for method in wire.METHODS:
        for example in found.methods.get(method.name, ()):
            yield method.name, example
    for tag, value in found.events.items():
        yield f"event {tag}", Example((from_bridge(event(7, value)),))
    for error in found.errors:
        yield "errors", Example((from_bridge(error),))


def _canonicalize(example: Example) -> None:
    """Write into each of the bridge's messages of ``example`` what the bridge sends."""
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


def _encoded(value: Any, typ: Any) -> Any:
    return msgspec.to_builtins(msgspec.convert(value, typ))
