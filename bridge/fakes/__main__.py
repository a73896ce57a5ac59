"""``python -m bridge.fakes``: serve the fake Messages API on 127.0.0.1 until stdin closes.

Prints the base URL as the first line of stdout, so a test in any language can start it,
read the URL and point the CLI at it (``ANTHROPIC_BASE_URL``). ``POST /_fake/enqueue``
queues scripts (see :func:`bridge.fakes.script_from_json`); ``GET /_fake/requests`` lists
the main ``/v1/messages`` bodies received so far.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import FakeMessagesAPI


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until stdin closes; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m bridge.fakes", description=__doc__)
    parser.parse_args(argv)
    with FakeMessagesAPI() as api:
        print(api.url, flush=True)
        try:
            sys.stdin.read()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
