"""The fake Messages API, kept under its old name: it lives in :mod:`bridge.fakes`.

``python -m bridge.testing.fake_api`` serves it on 127.0.0.1 until stdin closes (see
:func:`main`).
"""

from __future__ import annotations

from collections.abc import Sequence

from bridge import fakes
from bridge.fakes import *  # noqa: F403  (the names this module always exported)
from bridge.fakes import FakeMessagesAPI

__all__ = fakes.__all__


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bridge.testing.fake_api``: serve on 127.0.0.1 until stdin closes.

    Prints the base URL as the first line of stdout, so a test in any language can start it,
    read the URL and point the CLI at it (``ANTHROPIC_BASE_URL``). ``POST /_fake/enqueue``
    queues scripts (see :func:`script_from_json`); ``GET /_fake/requests`` lists the main
    ``/v1/messages`` bodies received so far.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m bridge.testing.fake_api")
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
