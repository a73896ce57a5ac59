"""The bridge client and the conversation model under Node's test runner, against the real
bridge with the real CLI and the fake Messages API (the fake CLI for failures)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.vscode


@pytest.mark.timeout(300)
def test_client_and_model_pass_node_test_runner(
    built_extension: Path, suite_env: dict[str, str]
) -> None:
    run = subprocess.run(
        ["node", "--test", "--test-concurrency=1", "--test-reporter=spec", "out/test/*.test.mjs"],
        cwd=built_extension,
        env=suite_env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    print(run.stdout)
    assert run.returncode == 0, f"node --test failed:\n{run.stdout}\n{run.stderr}"
    passed = re.search(r"\bpass (\d+)", run.stdout)
    failed = re.search(r"\bfail (\d+)", run.stdout)
    assert passed and int(passed.group(1)) > 0, run.stdout
    assert failed and int(failed.group(1)) == 0, run.stdout
