"""``claude-bridge`` / ``python -m bridge``: serve, acp, schema, doctor, demo."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__


def _positive(text: str) -> int:
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def _positive_seconds(text: str) -> float:
    seconds = float(text)
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return seconds


def _pool_size(text: str) -> int:
    from .duplex.pool import MAX_POOL_SIZE

    size = int(text)
    if not 0 <= size <= MAX_POOL_SIZE:
        raise argparse.ArgumentTypeError(f"must be from 0 to at most {MAX_POOL_SIZE}, not {size}")
    return size


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claude-bridge",
        description="Hold long conversations with Claude Code: a JSON-RPC bridge on stdio.",
    )
    parser.add_argument("--version", action="version", version=f"claude-bridge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser(
        "serve",
        help="serve JSON-RPC on stdin/stdout (the default)",
        description="Serve the bridge's JSON-RPC protocol on stdin/stdout "
        "(Content-Length or newline-delimited framing, detected).",
    )
    _serve_args(serve)

    schema = sub.add_parser(
        "schema",
        help="write schema/ (JSON Schema, methods, PROTOCOL.md)",
        description="Generate the wire contract files from bridge/rpc/wire/.",
    )
    schema.add_argument("--out", default="schema", help="output directory (default: schema)")
    schema.add_argument(
        "--editors",
        help="where the editors' generated constants go (default: the editors/ directory "
        "beside --out, when there is one)",
    )
    schema.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if the files on disk differ from what would be generated",
    )

    acp = sub.add_parser(
        "acp",
        help="serve the Agent Client Protocol (Zed, CodeCompanion, agent-shell, acpx)",
        description="Be an ACP v1 agent on stdin/stdout (newline-delimited JSON-RPC): "
        "each ACP session is one long-lived claude process.",
    )
    _server_args(acp, warm_pool=1, per="project")

    doctor = sub.add_parser(
        "doctor",
        help="find the CLI and check that a session starts",
        description="Find the claude CLI, print versions, spawn one session "
        "and report whether it answered initialize.",
    )
    doctor.add_argument("--claude-path", help="the claude executable to use")

    demo = sub.add_parser(
        "demo",
        help="a scripted conversation through the bridge, offline",
        description="Start a fake Messages API, the bridge and the real CLI, "
        "and drive a conversation as an editor would.",
    )
    demo.add_argument("--claude-path", help="the claude executable to use")
    return parser


def _server_args(parser: argparse.ArgumentParser, *, warm_pool: int, per: str) -> None:
    """The arguments every stdio server of the bridge (serve, acp) takes."""
    parser.add_argument("--claude-path", help="the claude executable for new sessions")
    parser.add_argument("--log-file", help="write diagnostics to this file (created mode 0600)")
    parser.add_argument("--verbose", action="store_true", help="log diagnostics to stderr")
    parser.add_argument(
        "--max-message-bytes",
        type=_positive,
        default=64 * 1024 * 1024,
        help="largest incoming message accepted (default 64 MiB)",
    )
    parser.add_argument(
        "--warm-pool",
        type=_pool_size,
        default=warm_pool,
        metavar="N",
        help=f"keep N spare CLI processes ready per {per} (default {warm_pool}; 0 turns it off)",
    )
    parser.add_argument(
        "--warm-idle",
        type=_positive_seconds,
        default=300.0,
        metavar="SECONDS",
        help="reap a spare unused this long (default 300)",
    )


def _serve_args(parser: argparse.ArgumentParser) -> None:
    _server_args(parser, warm_pool=0, per="session key")
    parser.add_argument(
        "--no-warm-context",
        action="store_true",
        help="do not warm spares with a context-usage request (see the README)",
    )
    parser.add_argument(
        "--max-queued-events",
        type=_positive,
        default=4096,
        help="events queued for a slow client before backpressure (default 4096)",
    )
    parser.add_argument(
        "--keep-closed",
        type=int,
        default=256,
        metavar="N",
        help="closed sessions that still answer session/status, for 10 minutes (default 256)",
    )
    parser.add_argument(
        "--max-unwritten-bytes",
        type=_positive,
        default=4 << 20,
        metavar="BYTES",
        help="answers waiting for a slow client before input is no longer read (default 4 MiB)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``claude-bridge`` command."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if not args_list or (
        args_list[0].startswith("-") and args_list[0] not in ("-h", "--help", "--version")
    ):
        args_list.insert(0, "serve")
    args = parser.parse_args(args_list)
    if args.command == "serve":
        from .rpc.server import BridgeConfig, serve_stdio

        config = BridgeConfig(
            claude_path=args.claude_path,
            max_message_bytes=args.max_message_bytes,
            max_queued_events=args.max_queued_events,
            max_unwritten_bytes=args.max_unwritten_bytes,
            keep_closed=args.keep_closed,
            warm_pool=args.warm_pool,
            warm_idle_timeout=args.warm_idle,
            warm_context=not args.no_warm_context,
            handle_signals=True,
        )
        return serve_stdio(config, log_file=args.log_file, verbose=args.verbose)
    if args.command == "acp":
        from .acp import AcpConfig
        from .acp import serve_stdio as serve_acp

        acp_config = AcpConfig(
            claude_path=args.claude_path,
            max_message_bytes=args.max_message_bytes,
            warm_pool=args.warm_pool,
            warm_idle_timeout=args.warm_idle,
            handle_signals=True,
        )
        return serve_acp(acp_config, log_file=args.log_file, verbose=args.verbose)
    if args.command == "schema":
        from .rpc.schema import main as schema_main

        return schema_main(args.out, check=args.check, editors=args.editors)
    if args.command == "doctor":
        from .doctor import main as doctor_main

        return doctor_main(args.claude_path)
    if args.command == "demo":
        from .demo import main as demo_main

        return demo_main(args.claude_path)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
