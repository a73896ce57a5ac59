"""The generated wire contract (schema/): deterministic, committed up to date, and
strict enough to catch a wrong message."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from bridge.rpc import schema, wire
from bridge.rpc.schema.contract import ContractValidator

REPO = Path(__file__).resolve().parents[1]
SCHEMA_DIR = REPO / "schema"
PROTOCOL_TS = REPO / "editors" / "vscode" / "src" / "protocol.ts"
SID = "s1-2674ed3e"


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return schema.generate()


@pytest.fixture(scope="module")
def contract() -> ContractValidator:
    return ContractValidator()


def _client_requests() -> list[wire.Method]:
    return [m for m in wire.METHODS if m.kind == "request" and schema.sends(m, "clientToServer")]


# --------------------------------------------------------------------------- generator


def test_generator_is_deterministic(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert schema.main(str(first), check=False) == 0
    assert schema.main(str(second), check=False) == 0
    names = sorted(p.name for p in first.iterdir())
    assert names == ["PROTOCOL.md", "bridge.schema.json", "methods.json"]
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert schema.generate() == schema.generate()


def test_committed_schema_matches_wire(files: dict[str, bytes]) -> None:
    """The drift check CI relies on (as does `claude-bridge schema --check`)."""
    stale = [
        name
        for name, content in sorted(files.items())
        if not (SCHEMA_DIR / name).is_file() or (SCHEMA_DIR / name).read_bytes() != content
    ]
    assert not stale, f"schema/ is out of date ({stale}): run `claude-bridge schema` and commit"
    assert schema.main(str(SCHEMA_DIR), check=True) == 0


def test_check_reports_stale_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert schema.main(str(tmp_path), check=True) == 1  # nothing written yet
    schema.main(str(tmp_path), check=False)
    assert schema.main(str(tmp_path), check=True) == 0
    capsys.readouterr()
    methods = tmp_path / "methods.json"
    methods.write_text(methods.read_text().replace('"session/send"', '"session/sned"'))
    assert schema.main(str(tmp_path), check=True) == 1
    err = capsys.readouterr().err
    assert str(methods) in err and "PROTOCOL.md" not in err
    assert "claude-bridge schema" in err


def test_editor_constants_are_committed_up_to_date() -> None:
    editors = REPO / "editors"
    for name, content in schema.generate_editor_files().items():
        assert (editors / name).read_bytes() == content, f"{name}: run `claude-bridge schema`"


def test_check_reports_a_stale_editor_constants_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, editors = tmp_path / "schema", tmp_path / "editors"
    editors.mkdir()  # a checkout: editors/ beside schema/
    assert schema.main(str(out), check=False) == 0
    assert schema.main(str(out), check=True) == 0
    lua = editors / "neovim" / "lua" / "claude_bridge" / "protocol.lua"
    lua.write_text(lua.read_text().replace("SessionNotFound = -31001", "SessionNotFound = -1"))
    capsys.readouterr()
    assert schema.main(str(out), check=True) == 1
    assert str(lua) in capsys.readouterr().err


def test_editor_constants_name_every_error_permission_mode_and_event() -> None:
    files = {name: content.decode() for name, content in schema.generate_editor_files().items()}
    for text in files.values():
        for code, (name, _) in wire.ERRORS.items():
            assert str(code) in text and name in text
        for mode in wire.PERMISSION_MODES:
            assert f'"{mode}"' in text
        for cls in schema.event_types():
            assert f'"{schema.event_tag(cls)}"' in text
    elisp = files["emacs/claude-bridge-protocol.el"]
    assert "(defconst claude-bridge-protocol-error-session-not-found -31001" in elisp


def test_the_contract_module_imports_without_jsonschema_until_a_validator_is_built() -> None:
    script = (
        "import sys; sys.modules['jsonschema'] = None\n"
        "import bridge.rpc.schema.contract as contract\n"
        "try:\n    contract.ContractValidator()\n"
        "except ImportError:\n    print('needs jsonschema')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "needs jsonschema\n"


def test_schema_is_valid_draft_2020_12(files: dict[str, bytes]) -> None:
    document = json.loads(files["bridge.schema.json"])
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(document)


def test_examples_are_checked_against_the_schema() -> None:
    # True: jsonschema is installed, so the generator validated every example.
    assert schema.check_examples(schema.build_schema())


# --------------------------------------------------------------------------- completeness


def test_every_method_is_in_the_schema_and_the_table(files: dict[str, bytes]) -> None:
    defs = json.loads(files["bridge.schema.json"])["$defs"]
    table = json.loads(files["methods.json"])
    assert table["protocolVersion"] == wire.PROTOCOL_VERSION
    assert [m["name"] for m in table["methods"]] == [m.name for m in wire.METHODS]
    client = {r["$ref"].rsplit("/", 1)[1] for r in defs["ClientMessage"]["anyOf"]}
    server = {r["$ref"].rsplit("/", 1)[1] for r in defs["ServerMessage"]["anyOf"]}
    for method, entry in zip(wire.METHODS, table["methods"], strict=True):
        kind = "Request" if method.kind == "request" else "Notification"
        envelope = schema.envelope_name(method.name, kind)
        assert defs[envelope]["properties"]["method"] == {"const": method.name}
        assert entry["envelope"] == {"$ref": f"#/$defs/{envelope}"}
        if method.params is not None:
            assert method.params.__name__ in defs
        if schema.sends(method, "clientToServer"):
            assert envelope in client
        if schema.sends(method, "serverToClient"):
            assert envelope in server
        if method.kind == "request":
            response = schema.envelope_name(method.name, "Response")
            assert response in (server if schema.sends(method, "clientToServer") else client)
            assert [e["code"] for e in entry["errors"]] == list(schema.method_errors(method))
    for cls in schema.wire_types():
        assert cls.__name__ in defs, cls
    assert {"ErrorResponse", "ErrorCode", "ErrorData", "Event"} <= set(defs)


def test_every_error_code_is_documented(files: dict[str, bytes]) -> None:
    defs = json.loads(files["bridge.schema.json"])["$defs"]
    codes = defs["ErrorCode"]["oneOf"]
    assert [c["const"] for c in codes] == list(wire.ERRORS)
    for entry in codes:
        name, description = wire.ERRORS[entry["const"]]
        assert entry["title"] == name and entry["description"] == description
    protocol = files["PROTOCOL.md"].decode()
    for code, (name, _) in wire.ERRORS.items():
        assert f"| {code} | {name} |" in protocol


def test_every_field_is_documented(files: dict[str, bytes]) -> None:
    """Field docstrings in bridge/rpc/wire/ reach the schema; none is missing."""
    defs = json.loads(files["bridge.schema.json"])["$defs"]
    assert defs["CreateParams"]["properties"]["cwd"]["description"] == (
        "The session's working directory (absolute, or relative to the bridge's)."
    )
    undocumented = [
        f"{cls.__name__}.{field.name}"
        for cls in schema.wire_types()
        for field in msgspec.structs.fields(cls)
        if "description" not in defs[cls.__name__]["properties"][field.encode_name]
    ]
    assert not undocumented, f"add a docstring after these fields in rpc/wire/: {undocumented}"


def test_protocol_md_covers_methods_events_and_policies(files: dict[str, bytes]) -> None:
    protocol = files["PROTOCOL.md"].decode()
    for method in wire.METHODS:
        section = protocol.split(f"### `{method.name}`\n", 1)[1].split("\n### ", 1)[0]
        assert "**Example**" in section, method.name
    for cls in schema.event_types():
        assert f"### `{schema.event_tag(cls)}` ({cls.__name__})" in protocol
    for heading in (
        "## Framing",
        "## Lifecycle",
        "## Permissions",
        "## Cancellation",
        "## Ordering, backpressure and coalescing",
        "## Compatibility",
    ):
        assert heading in protocol
    assert f'`"{wire.PROTOCOL_VERSION}"`' in protocol


# --------------------------------------------------------------------------- examples


def _examples(protocol: str) -> list[list[tuple[str, Any]]]:
    """The exchanges of PROTOCOL.md's ```jsonc blocks: (sender, message) lists."""
    exchanges = []
    for block in re.findall(r"```jsonc\n(.*?)```", protocol, flags=re.S):
        parts = re.split(r"^// (client|bridge) → \w+\n", block, flags=re.M)
        assert parts[0] == "", "a message in an example block has no sender"
        exchanges.append([(parts[i], json.loads(parts[i + 1])) for i in range(1, len(parts), 2)])
    return exchanges


def test_every_example_in_protocol_md_validates(contract: ContractValidator) -> None:
    protocol = (SCHEMA_DIR / "PROTOCOL.md").read_text()
    exchanges = _examples(protocol)
    assert len(exchanges) >= len(wire.METHODS)
    checked = 0
    for exchange in exchanges:
        asked: dict[Any, str] = {}
        asking: dict[Any, str] = {}
        for sender, msg in exchange:
            method = msg.get("method")
            if sender == "client":
                if method is not None and "id" in msg:
                    asked[msg["id"]] = method
                if method == "session/send" and msg["params"].get("prompt") == 42:
                    with pytest.raises(jsonschema.ValidationError):
                        contract.validate_client_message(msg)
                    continue
                contract.validate_client_message(
                    msg, request_method=None if method else asking.get(msg["id"])
                )
            else:
                if method is not None and "id" in msg:
                    asking[msg["id"]] = method
                contract.validate_server_message(
                    msg, request_method=None if method else asked.get(msg["id"])
                )
            checked += 1
    events = re.findall(r"```json\n(.*?)```", protocol, flags=re.S)
    assert len(events) == len(schema.event_types())
    for text in events:
        event = json.loads(text)
        contract.validate_server_message(
            {
                "jsonrpc": "2.0",
                "method": "session/event",
                "params": {"sessionId": SID, "seq": 1, "event": event, "replay": False},
            }
        )
    assert checked > 50


# --------------------------------------------------------------------------- strictness


def _request(method: str, params: Any = None, msg_id: int = 7) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def _data(kind: str) -> dict[str, Any]:
    """Error data as the bridge sends it: every member, unset ones null."""
    return {
        "kind": kind,
        **dict.fromkeys(
            ("path", "tried", "exitStatus", "limit", "sessionId", "claudeSessionId", "capability")
        ),
    }


def _event(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/event",
        "params": {"sessionId": SID, "seq": 3, "event": event, "replay": False},
    }


@pytest.mark.parametrize(
    ("side", "message", "request_method", "complaint"),
    [
        ("client", _request("session/send", {"prompt": "hi"}), None, "'sessionId' is a required"),
        ("client", _request("session/send", {"sessionId": SID, "prompt": 42}), None, "prompt"),
        ("client", _request("session/create", {"model": "opus"}), None, "'cwd' is a required"),
        (
            "client",
            _request("session/setPermissionMode", {"sessionId": SID, "mode": "yolo"}),
            None,
            "yolo",
        ),
        ("client", _request("session/frobnicate", {}), None, "unknown method"),
        (
            "client",
            {"jsonrpc": "2.0", "method": "session/status", "params": {}},
            None,
            "needs an id",
        ),
        ("client", {"jsonrpc": "1.0", "id": 1, "method": "session/list"}, None, "'2.0'"),
        ("client", _event({"type": "textDelta", "text": "x"}), None, "sent the other way"),
        ("client", {"jsonrpc": "2.0", "id": 1, "result": {"behavior": "maybe"}}, None, "maybe"),
        ("server", _event({"type": "sparkle", "text": "x"}), None, "unknown event type 'sparkle'"),
        ("server", _event({"type": "toolUse", "name": "Bash", "input": {}}), None, "toolUseId"),
        (
            "server",
            _event({"type": "textDelta", "text": 5, "index": 0, "parentToolUseId": None}),
            None,
            "is not of type 'string'",
        ),
        ("server", _event({"type": "textDelta", "text": "x"}), None, "'index' is a required"),
        (
            "server",
            {"jsonrpc": "2.0", "id": 3, "result": {"sessions": [{"sessionId": SID}]}},
            "session/list",
            "is a required property",
        ),
        ("server", {"jsonrpc": "2.0", "id": 3, "result": {}}, "shutdown", "is not of type 'null'"),
        (
            "server",
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -31002, "message": "busy", "data": _data("TurnInFlight")},
            },
            "session/status",
            "not documented for session/status",
        ),
        (
            "server",
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -1, "message": "?", "data": _data("x")},
            },
            None,
            "-1",
        ),
        (
            "server",
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -31001, "message": "gone"}},
            None,
            "'data' is a required",
        ),
        (
            "server",
            {"jsonrpc": "2.0", "id": 1, "method": "session/event", "params": {}},
            None,
            "is a notification",
        ),
    ],
)
def test_invalid_messages_fail(
    contract: ContractValidator,
    side: str,
    message: dict[str, Any],
    request_method: str | None,
    complaint: str,
) -> None:
    with pytest.raises(jsonschema.ValidationError) as caught:
        if side == "client":
            contract.validate_client_message(message)
        else:
            contract.validate_server_message(message, request_method=request_method)
    assert complaint in caught.value.message


def test_server_event_union_is_closed_in_the_schema(files: dict[str, bytes]) -> None:
    validator = jsonschema.Draft202012Validator(
        {**json.loads(files["bridge.schema.json"]), "$ref": "#/$defs/ServerMessage"}
    )
    assert validator.is_valid(_event({"type": "lagged", "missed": 3}))
    assert not validator.is_valid(_event({"type": "fireworks"}))
    # The root schema takes any message of either direction.
    root = jsonschema.Draft202012Validator(json.loads(files["bridge.schema.json"]))
    assert root.is_valid(_request("session/list"))
    assert root.is_valid(_event({"type": "lagged", "missed": 3}))
    assert not root.is_valid({"jsonrpc": "2.0", "id": 1})


@pytest.mark.parametrize("method", _client_requests(), ids=lambda m: m.name)
def test_requests_without_params(contract: ContractValidator, method: wire.Method) -> None:
    bare = _request(method.name)
    if method.params is None or method.params_optional:
        contract.validate_client_message(bare)
        contract.validate_client_message({**bare, "params": None})
    else:
        with pytest.raises(jsonschema.ValidationError, match="'params' is a required property"):
            contract.validate_client_message(bare)


def test_shutdown_has_no_params_and_a_null_result(contract: ContractValidator) -> None:
    contract.validate_client_message(_request("shutdown"))
    contract.validate_server_message(
        {"jsonrpc": "2.0", "id": 7, "result": None}, request_method="shutdown"
    )
    with pytest.raises(jsonschema.ValidationError):
        contract.validate_client_message(_request("shutdown", {"now": True}))


def test_unknown_members_are_allowed_for_forward_compatibility(
    contract: ContractValidator,
) -> None:
    contract.validate_client_message(_request("session/status", {"sessionId": SID, "v2": 1}))
    contract.validate_server_message(_event({"type": "lagged", "missed": 3, "since": 1}))


def test_bridge_encoding_validates(contract: ContractValidator) -> None:
    """What the server encodes from wire types (defaults omitted) is what the schema says."""
    status = wire.SessionStatus(
        session_id=SID,
        state="busy",
        pid=None,
        turn_in_flight=True,
        cwd="/tmp",
        total_cost_usd=0.0,
        turns_completed=0,
        exit_status=wire.ExitStatus("running"),
    )
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "result": status})
    contract.validate_server_message(json.loads(body), request_method="session/status")
    for cls in schema.event_types():
        fields = {f.name: _sample(f.type) for f in msgspec.structs.fields(cls) if f.required}
        event = cls(**fields)
        params = wire.EventParams(session_id=SID, seq=1, event=event)  # type: ignore[arg-type]
        body = msgspec.json.encode({"jsonrpc": "2.0", "method": "session/event", "params": params})
        contract.validate_server_message(json.loads(body))


def _sample(annotation: Any) -> Any:
    samples: dict[Any, Any] = {str: "x", int: 1, float: 1.5, bool: True}
    if annotation in samples:
        return samples[annotation]
    return {}


# --------------------------------------------------------------------------- TypeScript


@pytest.mark.timeout(600)
def test_protocol_ts_matches_the_schema(tmp_path: Path, files: dict[str, bytes]) -> None:
    """editors/vscode/src/protocol.ts is what the pinned json2ts makes of the schema."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to generate protocol.ts (CI has them)")
    schema_file = tmp_path / "bridge.schema.json"
    schema_file.write_bytes(files["bridge.schema.json"])
    out = tmp_path / "protocol.ts"
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "gen_protocol_ts.sh"), str(schema_file), str(out)],
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == PROTOCOL_TS.read_bytes(), (
        "editors/vscode/src/protocol.ts is out of date: run `claude-bridge schema` "
        "then `scripts/gen_protocol_ts.sh` and commit"
    )
