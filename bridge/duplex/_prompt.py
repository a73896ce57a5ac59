"""What a prompt may hold, checked before it is written to the CLI, and the mention text
that brings a file into it.

A prompt is text, or a list of Messages API content blocks. The CLI passes blocks on
without checking them, and a malformed one is lost silently (a text block without
``text``: an empty turn, no request) or kills it (CLI 2.1.176 exits on a text block
without text or an image without data), so :func:`check_prompt` refuses them first.
Blocks of other types (``document``, ...) go through as they are: the Messages API
judges them.

A file reaches the model best as a mention in the text (:func:`mention`): the CLI
reads the file itself, as its own Read tool would (a folder: its listing), records it
in the transcript, and counts it as read for a later Edit.
"""

from __future__ import annotations

import binascii
import os
from collections.abc import Mapping
from typing import Any

__all__ = ["IMAGE_TYPES", "check_base64", "check_prompt", "mention"]

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types the Messages API takes."""


def check_base64(block: Mapping[str, Any], key: str, where: str) -> None:
    """Raise ``ValueError`` unless ``block[key]`` is non-empty, padded base64 without
    line breaks."""
    value = block.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{where}.{key} must be a string")
    try:
        decoded = binascii.a2b_base64(value, strict_mode=True)
    except binascii.Error:
        raise ValueError(f"{where}.{key} is not base64 (no line breaks, padded)") from None
    if not decoded:
        raise ValueError(f"{where}.{key} is empty")


def check_prompt(prompt: Any) -> None:
    """Raise ``ValueError`` unless ``prompt`` is a string or a non-empty list of content
    blocks whose text blocks have ``text`` and whose images are base64 images of one of
    :data:`IMAGE_TYPES`."""
    if isinstance(prompt, str):
        return
    if not isinstance(prompt, list) or not prompt:
        raise ValueError("a prompt is a string or a non-empty list of content blocks")
    for index, block in enumerate(prompt):
        where = f"prompt[{index}]"
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise ValueError(f"{where} must be a content block: an object with a `type`")
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            raise ValueError(f"{where}.text must be a string")
        if block["type"] == "image":
            source = block.get("source")
            if not isinstance(source, Mapping) or source.get("type") != "base64":
                raise ValueError(f'{where}.source must be {{"type": "base64", ...}}')
            if source.get("media_type") not in IMAGE_TYPES:
                raise ValueError(
                    f"{where}.source.media_type must be one of {', '.join(IMAGE_TYPES)}"
                )
            check_base64(source, "data", f"{where}.source")


def mention(
    path: str | os.PathLike[str],
    cwd: str | os.PathLike[str] | None = None,
    lines: tuple[int, int] | int | None = None,
) -> str:
    """The mention text of a file (or a folder) for a prompt: ``@src/app.py``.

    ``path`` is written relative to ``cwd`` (the session's) when it lies inside it, else
    absolute; a folder should end in ``/``. ``lines`` narrows a file to one line (``5``:
    ``@app.py#L5``) or a range (``(2, 3)``: ``@app.py#L2-3``). A path with spaces is
    quoted, the range inside the quotes (``@"my notes.md#L2-3"``: the CLI ignores a
    range after the closing quote). A mention must stand after a space or at the start
    of the text: the CLI does not see one right after ``(`` or a letter.

    Raises ``ValueError`` for a path with a double quote or a line break (no mention
    can hold it) and for a range that does not start at line 1 or later.
    """
    text = os.fspath(path)
    if cwd is not None:
        base = os.path.abspath(os.fspath(cwd))
        full = os.path.abspath(os.path.join(base, text))
        if full == base or full.startswith(base.rstrip(os.sep) + os.sep):
            suffix = os.sep if text.endswith(os.sep) and full != base else ""
            text = os.path.relpath(full, base) + suffix
        else:
            text = full + (os.sep if text.endswith(os.sep) else "")
    if '"' in text or "\n" in text or "\r" in text:
        raise ValueError(f"no mention can name {text!r} (a double quote or a line break)")
    if lines is not None:
        first, last = (lines, lines) if isinstance(lines, int) else lines
        if first < 1 or last < first:
            raise ValueError(f"not a line range: {lines!r}")
        text += f"#L{first}" if first == last else f"#L{first}-{last}"
    return f'@"{text}"' if any(c.isspace() for c in text) else f"@{text}"
