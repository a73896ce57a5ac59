"""What a CLI version can do: versions, the three states of capabilities, terminal reasons."""

from __future__ import annotations

from bridge.duplex import (
    CANCEL_QUEUED,
    FALLBACKS,
    LIFECYCLE,
    MIN_CLI_VERSION,
    CliFeatures,
    parse_version,
    terminal_reason,
    version_supported,
    writes_transcript_behind,
)
from bridge.duplex.frames import ResultFrame, SystemInit


def test_versions_parse_from_what_claude_version_prints() -> None:
    assert parse_version("2.1.176 (Claude Code)") == (2, 1, 176)
    assert parse_version("2.1.332-fake") == (2, 1, 332)
    assert parse_version("unknown") is None
    assert parse_version(None) is None


def test_the_minimum_is_supported_and_anything_older_is_not() -> None:
    assert version_supported(MIN_CLI_VERSION) is True
    assert version_supported("2.1.332") is True
    assert version_supported("2.1.99") is False
    assert version_supported("1.9.999") is False
    assert version_supported(None) is None  # unknown is not "unsupported"


def test_capabilities_are_unknown_advertised_or_legacy() -> None:
    unknown = CliFeatures(version="2.1.332")
    advertised = CliFeatures(capabilities=(LIFECYCLE,), known=True)
    legacy = CliFeatures(capabilities=None, known=True)
    assert (unknown.legacy, unknown.has(LIFECYCLE), unknown.missing()) == (None, None, [])
    assert (advertised.legacy, advertised.has(LIFECYCLE)) == (False, True)
    assert advertised.has(CANCEL_QUEUED) is False
    assert advertised.missing() == [cap for cap in FALLBACKS if cap != LIFECYCLE]
    assert (legacy.legacy, legacy.has(LIFECYCLE), legacy.missing()) == (True, False, [*FALLBACKS])


def test_an_api_error_status_makes_the_terminal_reason_api_error() -> None:
    old = ResultFrame(is_error=True, api_error_status=400, terminal_reason="completed")
    new = ResultFrame(is_error=True, api_error_status=400, terminal_reason="api_error")
    aborted = ResultFrame(is_error=True, terminal_reason="aborted_streaming")
    fine = ResultFrame(terminal_reason="completed")
    assert terminal_reason(old) == terminal_reason(new) == "api_error"
    assert terminal_reason(aborted) == "aborted_streaming"
    assert terminal_reason(fine) == "completed"


def test_features_are_what_initialize_and_the_latest_init_reported() -> None:
    before = CliFeatures.reported(None, {"claude_code_version": "2.1.332"})
    assert before == CliFeatures(version="2.1.332") and before.legacy is None
    legacy = CliFeatures.reported(SystemInit(claude_code_version="2.1.176"), {})
    assert legacy.known and legacy.legacy and legacy.version == "2.1.176"
    modern = CliFeatures.reported(
        SystemInit(capabilities=[LIFECYCLE]), {"claude_code_version": "x"}
    )
    assert modern.has(LIFECYCLE) and modern.version == "x"


def test_only_clis_from_2_1_332_are_known_to_write_a_turn_before_answering_it() -> None:
    assert [writes_transcript_behind(v) for v in ("2.1.176", "2.1.257", "2.1.332", "2.2.0")] == [
        True,
        True,
        False,
        False,
    ]
    assert writes_transcript_behind(None) is True  # unknown: assume the older behaviour
