"""The files of ``schema/`` and the editors' constants: generate, write, check (``--check``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .build import METHODS_FILE, PROTOCOL_FILE, SCHEMA_FILE, build_schema
from .editors import generate_editor_files
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


def _editors_dir(out: Path, editors: str | None) -> Path | None:
    if editors is not None:
        return Path(editors)
    beside = out.resolve().parent / "editors"  # a checkout: schema/ and editors/ side by side
    return beside if beside.is_dir() else None


def main(out: str, check: bool = False, editors: str | None = None) -> int:
    """Write ``schema/`` into ``out`` and the editors' constants into ``editors`` (default:
    the ``editors/`` beside ``out``, when there is one); with ``check``, only report files
    that differ."""
    files = generate()
    target = Path(out)
    editors_dir = _editors_dir(target, editors)
    editor_files = generate_editor_files() if editors_dir is not None else {}
    if check:
        stale = list(_differs(target, files))
        if editors_dir is not None:
            stale += _differs(editors_dir, editor_files)
        if stale:
            print("schema files are out of date with bridge/rpc/wire/:", file=sys.stderr)
            for stale_path in stale:
                print(f"  {stale_path}", file=sys.stderr)
            print("run `claude-bridge schema` and commit the result", file=sys.stderr)
            return 1
        return 0
    _write(target, files)
    if editors_dir is not None:
        _write(editors_dir, editor_files)
    return 0


def _write(target: Path, files: dict[str, bytes]) -> None:
    for name, content in sorted(files.items()):
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
