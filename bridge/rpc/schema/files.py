"""The files of ``schema/``: generate them, write them, check them (``--check``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .build import METHODS_FILE, PROTOCOL_FILE, SCHEMA_FILE, build_schema
from .markdown import build_protocol
from .methods import build_methods
from .validate import check_examples


def _dump(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


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
            print("schema files are out of date with bridge/rpc/wire/:", file=sys.stderr)
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
