"""PROTOCOL.md: the reference for host authors, rendered from the schema and the examples."""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

from bridge.duplex import MIN_CLI_VERSION, TESTED_CLI_VERSIONS

from .. import wire
from . import prose
from .build import JsonObj, clean_doc, event_tag, event_types, wire_types
from .examples import Examples, Step, canonical, from_bridge
from .methods import GENERIC_ERRORS, method_errors


def _anchor(name: str) -> str:
    """The HTML anchor of a method (``session/send`` -> ``session-send``)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n\n", "<br><br>").replace("\n", " ")


def _type_md(schema: JsonObj) -> str:
    """A property's type, for a table cell (links to the types it names)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name})"
    if "anyOf" in schema:
        return " \\| ".join(_type_md(s) for s in schema["anyOf"])
    if len(schema.get("allOf", ())) == 1:
        return _type_md(schema["allOf"][0])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        inner = _type_md(schema.get("items", {}))
        return f"({inner})[]" if "\\|" in inner else f"{inner}[]"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return f"object of {_type_md(extra)}"
        return "object"
    return kind if isinstance(kind, str) else "any"


def _table(defs: JsonObj, name: str) -> list[str]:
    schema = defs[name]
    props: JsonObj = schema.get("properties", {})
    if not props:
        return ["An empty object: `{}`."]
    required = set(schema.get("required", []))
    lines = ["| Field | Type | Required | Description |", "|---|---|---|---|"]
    for field, prop in props.items():
        text = prop.get("description", "")
        if "default" in prop and prop["default"] is not None:
            default = f"Default: `{json.dumps(prop['default'])}`."
            text = f"{text} {default}" if text else default
        lines.append(
            f"| `{field}` | {_type_md(prop)} | {'yes' if field in required else 'no'} "
            f"| {_cell(text)} |"
        )
    return lines


def _pretty(value: Any, indent: int = 0, used: int = 0, width: int = 88) -> str:
    """JSON, indented like a person would: containers that fit on a line stay on it."""
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or not value or indent + used + len(flat) <= width:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            label = json.dumps(key, ensure_ascii=False) + ": "
            items.append(pad + label + _pretty(item, indent + 2, len(label), width))
    else:
        items = [pad + _pretty(item, indent + 2, 0, width) for item in value]
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + "\n" + ",\n".join(items) + "\n" + " " * indent + closing


def _json_block(steps: tuple[Step, ...]) -> list[str]:
    lines = ["```jsonc"]
    for step in steps:
        arrow = "client → bridge" if step.sender == "client" else "bridge → client"
        lines.append(f"// {arrow}")
        lines.append(_pretty(step.message))
    lines.append("```")
    return lines


class _Doc:
    """PROTOCOL.md, built section by section."""

    def __init__(self, schema: JsonObj, examples: Examples) -> None:
        self.defs: JsonObj = schema["$defs"]
        self.examples = examples
        self.lines: list[str] = []
        self.anchored: set[str] = set()

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def text(self) -> str:
        return "\n".join(self.lines).rstrip() + "\n"

    def type_section(self, title: str, name: str | None) -> None:
        """``**Params**``/``**Result**`` of a method: the type's description and table."""
        if name is None:
            return
        anchor = ""
        if name not in self.anchored:
            self.anchored.add(name)
            anchor = f'<a id="{name}"></a>'
        description = self.defs[name].get("description", "")
        self.add(f"{anchor}**{title}** — `{name}`: {description}", "")
        self.add(*_table(self.defs, name), "")

    def method(self, method: wire.Method) -> None:
        arrow = {
            "clientToServer": "client → bridge",
            "serverToClient": "bridge → client",
            "both": "both ways",
        }[method.direction]
        self.add(f'<a id="{_anchor(method.name)}"></a>', "", f"### `{method.name}`", "")
        self.add(f"*{method.kind}, {arrow}.* {method.summary}", "")
        if method.params is None:
            self.add("**Params**: none (omit `params`).", "")
        else:
            title = "Params (may be omitted)" if method.params_optional else "Params"
            self.type_section(title, method.params.__name__)
        if method.kind == "request":
            if method.result is None:
                self.add("**Result**: `null`.", "")
            else:
                self.type_section("Result", method.result.__name__)
            codes = method_errors(method)
            if codes:
                listed = ", ".join(f"[{wire.ERRORS[c][0]}](#errors) ({c})" for c in codes)
                self.add(f"**Errors**: {listed}.", "")
        for example in self.examples.methods.get(method.name, ()):
            self.add("**Example**", "", *_json_block(example.steps), "")
            if example.note:
                self.add(example.note, "")

    def struct(self, name: str, title: str | None = None) -> None:
        self.anchored.add(name)
        self.add(f'<a id="{name}"></a>', "", f"### {title or f'`{name}`'}", "")
        description = self.defs[name].get("description", "")
        if description:
            self.add(description, "")
        self.add(*_table(self.defs, name), "")


def build_protocol(schema: JsonObj) -> str:
    """PROTOCOL.md."""
    version = wire.PROTOCOL_VERSION
    found = canonical()
    doc = _Doc(schema, found)
    doc.add(prose.INTRO.format(version=version), prose.FRAMING.format(), prose.LIFECYCLE)

    doc.add('<a id="methods"></a>', "", "## Methods", "")
    doc.add("| Method | Kind | Direction | Summary |", "|---|---|---|---|")
    for m in wire.METHODS:
        arrow = {"clientToServer": "→ bridge", "serverToClient": "→ client", "both": "both"}
        doc.add(
            f"| [`{m.name}`](#{_anchor(m.name)}) | {m.kind} | {arrow[m.direction]} "
            f"| {_cell(m.summary)} |"
        )
    doc.add("")
    for m in wire.METHODS:
        doc.method(m)

    doc.add('<a id="session-events"></a>', "", "## Session events", "")
    doc.add(
        '<a id="Event"></a>`session/event` carries one event; its `type` says which. '
        "Clients must ignore types they do not know (see [Compatibility](#compatibility)).",
        "",
        "| `type` | Event | Summary |",
        "|---|---|---|",
    )
    for cls in event_types():
        description = doc.defs[cls.__name__].get("description", "")
        doc.add(
            f"| `{event_tag(cls)}` | [{cls.__name__}](#{cls.__name__}) | {_cell(description)} |"
        )
    doc.add("")
    for cls in event_types():
        tag = event_tag(cls)
        doc.struct(cls.__name__, title=f"`{tag}` ({cls.__name__})")
        doc.add("```json", _pretty(found.events[tag]), "```", "")

    doc.add('<a id="types"></a>', "", "## Types", "")
    doc.add("Types used inside params, results and events.", "")
    shown = set(doc.anchored) | {"ErrorData"}
    for cls in wire_types():
        if cls.__name__ not in shown:
            doc.struct(cls.__name__)

    doc.add('<a id="errors"></a>', "", "## Errors", "")
    doc.add(
        "A failed request is answered with a JSON-RPC error: `code` (below), `message` "
        "(for a person) and `data`, an [`ErrorData`](#ErrorData) whose `kind` is the "
        "code's name.",
        "",
        clean_doc(inspect.getdoc(wire.ErrorCode) or ""),
        "",
        "Each method lists the codes it returns. Any request may also get "
        + ", ".join(f"{wire.ERRORS[c][0]} ({c})" for c in GENERIC_ERRORS)
        + "; every method with params may get InvalidParams.",
        "",
        "| Code | Name | When |",
        "|---|---|---|",
    )
    for code, (name, doc_text) in wire.ERRORS.items():
        doc.add(f"| {code} | {name} | {_cell(doc_text)} |")
    doc.add("")
    doc.struct("ErrorData")
    doc.add("**Examples**", "", *_json_block(tuple(from_bridge(e) for e in found.errors)), "")

    doc.add(
        prose.PERMISSIONS.format(),
        prose.HOST_TOOLS.format(),
        prose.PROMPT_CONTENT.format(),
        prose.CANCELLATION.format(),
        prose.BACKPRESSURE,
        prose.HISTORY.format(),
    )
    doc.add(
        prose.CLI_VERSIONS.format(
            minimum=MIN_CLI_VERSION,
            tested=", ".join(TESTED_CLI_VERSIONS),
            unsupported=wire.ErrorCode.UNSUPPORTED,
        )
    )
    doc.add(prose.COMPATIBILITY.format(version=version))
    return doc.text()
