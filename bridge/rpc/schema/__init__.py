"""Generate ``schema/``, the bridge's published contract, from :mod:`bridge.rpc.wire`.

``claude-bridge schema`` writes three files, each a pure function of the wire types:

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

The output is deterministic (same wire types, same bytes): keys are sorted,
nothing depends on time or the machine. ``claude-bridge schema --check``
compares the files on disk with what would be generated; CI runs it.

One module per job; nothing is built at import, only when asked for:

``build``      the JSON Schema
``methods``    the method table and the errors each method documents
``examples``   the example exchanges, as data (canonicalised on first use)
``validate``   the examples checked against the wire types and the schema
``contract``   :class:`~bridge.rpc.schema.contract.ContractValidator`, messages
               checked against the schema (needs ``jsonschema``)
``markdown``   PROTOCOL.md (its prose in ``prose``)
``editors``    the wire's constants for each editor plugin (Lua, Emacs Lisp, TypeScript)
``files``      the files of ``schema/``: generate, write, ``--check``
"""

from __future__ import annotations

from .build import (
    DIALECT,
    METHODS_FILE,
    PROTOCOL_FILE,
    SCHEMA_FILE,
    build_schema,
    envelope_name,
    event_tag,
    event_types,
    sends,
    wire_types,
)
from .editors import EDITOR_FILES, generate_editor_files
from .files import generate, main
from .markdown import build_protocol
from .methods import GENERIC_ERRORS, build_methods, method_errors
from .validate import check_examples

__all__ = [
    "DIALECT",
    "EDITOR_FILES",
    "GENERIC_ERRORS",
    "METHODS_FILE",
    "PROTOCOL_FILE",
    "SCHEMA_FILE",
    "build_methods",
    "build_protocol",
    "build_schema",
    "check_examples",
    "envelope_name",
    "event_tag",
    "event_types",
    "generate",
    "generate_editor_files",
    "main",
    "method_errors",
    "sends",
    "wire_types",
]
