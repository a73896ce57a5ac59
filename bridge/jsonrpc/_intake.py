"""Reading what a client sends: message bodies to JSON values, params to wire types.

Lenient where real clients need it, strict everywhere else:

- Lone UTF-16 surrogate escapes (``"\\ud800"``, which ``JSON.stringify`` emits for
  half a pair) are read as U+FFFD instead of failing the whole message.
- Nesting deeper than the decoder's recursion limit is a :class:`ParseFailure`,
  never an uncaught ``RecursionError``.
- An empty array stands for an empty object wherever the wire wants an object:
  Lua has one table type, and Neovim's ``vim.json.encode({})`` is ``[]``.
- A NUL character in any string of ``session/create`` params is refused with its
  path: it cannot cross into a process's arguments or environment.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import msgspec

__all__ = ["ParseFailure", "convert_params", "decode_message", "find_nul"]

T = TypeVar("T")

_decoder = msgspec.json.Decoder()
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_WANTS_OBJECT = re.compile(r"^Expected `[^`]*\bobject\b[^`]*`, got `array` - at `(\$[^`]*)`$")
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_MAX_RETRIES = 64


class ParseFailure(Exception):
    """The body is not a JSON document the bridge can read."""


def decode_message(body: bytes) -> Any:
    """The JSON value of ``body``; raises :class:`ParseFailure`."""
    try:
        return _decoder.decode(body)
    except RecursionError:
        raise ParseFailure("the message is nested too deeply") from None
    except msgspec.DecodeError as exc:
        if _SURROGATE_ESCAPE.search(body) is None:
            raise ParseFailure(str(exc)) from None
        error = str(exc)
    # msgspec refuses lone surrogates; the standard library reads them, then they are replaced.
    try:
        return _replace_surrogates(json.loads(body, parse_constant=_no_constant))
    except RecursionError:
        raise ParseFailure("the message is nested too deeply") from None
    except ValueError:
        raise ParseFailure(error) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def convert_params(params: Any, type_: type[T]) -> T:
    """``params`` as ``type_``, reading an empty array where an object is expected.

    Raises ``msgspec.ValidationError`` (with the offending path) otherwise.
    """
    if params == []:
        params = {}
    for _ in range(_MAX_RETRIES):
        try:
            return msgspec.convert(params, type_)
        except msgspec.ValidationError as exc:
            match = _WANTS_OBJECT.match(str(exc))
            if match is None or not _replace_empty_array(params, match.group(1)):
                raise
    return msgspec.convert(params, type_)


def _replace_empty_array(root: Any, path: str) -> bool:
    """Put ``{}`` in place of the ``[]`` at ``path`` (``$.a.b[0].c``); False if none is there."""
    parts: list[str | int] = [
        m.group(1) if m.group(1) is not None else int(m.group(2))
        for m in _PATH_PART.finditer(path[1:])
    ]
    if not parts:
        return False
    parent = root
    for part in parts[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return False
    last = parts[-1]
    try:
        if parent[last] != []:
            return False
    except (KeyError, IndexError, TypeError):
        return False
    parent[last] = {}
    return True


def find_nul(value: Any, path: str = "$") -> str | None:
    """The path of the first string (or key) in ``value`` holding a NUL, if any."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = find_nul(item, f"{path}[{i}]")
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and "\x00" in key:
                return path
            found = find_nul(item, f"{path}.{key}")
            if found is not None:
                return found
    return None
